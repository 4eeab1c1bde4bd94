/* SPDX-License-Identifier: BSD-3-Clause */
/* Umbrella header: #include <dpdo/dpdo.h> gives the whole public API. */
#ifndef DPDO_DPDO_H
#define DPDO_DPDO_H

#include "export.h"
#include "version.h"
#include "status.h"
#include "rng.h"
#include "dataset.h"
#include "loss.h"
#include "regularizer.h"
#include "node.h"
#include "reference.h"
#include "network.h"
#include "accountant.h"
#include "solver.h"
#include "policy.h"
#include "compressor.h"
#include "preprocess.h"
#include "algorithm.h"
#include "model_file.h"
#include "checkpoint.h"
#include "transport.h"
#include "audit.h"

#endif /* DPDO_DPDO_H */
