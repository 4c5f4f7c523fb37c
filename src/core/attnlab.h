// The engine's public surface, in one include.
#pragma once
#include "attention.h"
#include "build_info.h"
#include "matmul.h"
#include "kv_cache.h"
#include "multihead.h"
#include "rope.h"
#include "softmax.h"
#include "status.h"
