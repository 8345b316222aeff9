// The DSP testbenches' start (inside their `initial`): +seed= and +n=
// (random cycles), the RNG seeded, and which branch of the wrapper runs.
        if (!$value$plusargs("seed=%d", seed)) seed = 1;
        if (!$value$plusargs("n=%d", NRAND)) NRAND = 60000;
        $display("tb: seed=%0d random cycles=%0d %s", seed, NRAND,
`ifdef SYNTHESIS
                 "branch=SYNTHESIS (DSP48E2 model)"
`else
                 "branch=behavioural twin"
`endif
        );
        k = $urandom(seed);  // seeds the RNG ($urandom updates its argument)
