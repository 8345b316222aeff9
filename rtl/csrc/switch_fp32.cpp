// C ABI over the Verilator model of prism_switch_fp32 (prism_switch built
// without KULISCH_FIXED and AUTO): one call is one clock.
#include "Vprism_switch_fp32.h"
#define PRISM_TOP Vprism_switch_fp32
#define PRISM_FN(name) prism_switch_fp32_##name
#include "switch_impl.h"
