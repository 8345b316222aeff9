// C ABI over the Verilator model of prism_switch (every feature): one call is one clock.
#include "Vprism_switch.h"
#define PRISM_TOP Vprism_switch
#define PRISM_FN(name) prism_switch_##name
#include "switch_impl.h"
