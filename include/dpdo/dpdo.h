/* SPDX-License-Identifier: BSD-3-Clause */
/* Umbrella header: #include <dpdo/dpdo.h> gives the whole public API. */
#ifndef DPDO_DPDO_H
#define DPDO_DPDO_H

#include "accountant.h"
#include "algorithm.h"
#include "algorithm_type.h"
#include "allocator.h"
#include "audit.h"
#include "checkpoint.h"
#include "compressor.h"
#include "dataset.h"
#include "export.h"
#include "log.h"
#include "loss.h"
#include "model_file.h"
#include "network.h"
#include "node.h"
#include "policy.h"
#include "preprocess.h"
#include "reference.h"
#include "regularizer.h"
#include "rng.h"
#include "solver.h"
#include "status.h"
#include "train.h"
#include "transport.h"
#include "version.h"

#endif /* DPDO_DPDO_H */
