#pragma once
// The public API of hitmap++.

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/log.hpp"
#include "hit/core/program.hpp"
#include "hit/core/spec.hpp"
#include "hit/core/timer.hpp"
#include "hit/shape.hpp"
