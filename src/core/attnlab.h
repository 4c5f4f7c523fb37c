// The engine's public surface, in one include.
#pragma once
#include "attention.h"
#include "attention_backward.h"
#include "build_info.h"
#include "matmul.h"
#include "kv_cache.h"
#include "multihead.h"
#include "rope.h"
#include "softmax.h"
#include "softmax_backward.h"
#include "status.h"
