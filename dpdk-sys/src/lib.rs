//! Our binding to the system DPDK 22.11 (issue 9). Empty until the switch lands.
