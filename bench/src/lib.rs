//! Software vs hardware latency harness (issue 7). Empty until the bench lands.
