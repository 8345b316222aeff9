//! Rank traffic generator (issue 5). Empty until pktgen lands.
