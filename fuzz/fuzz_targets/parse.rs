//! Parse any bytes; whatever parses must re-emit to the same bytes (minor version
//! aside) and parse again to the same thing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prism_dataplane::wire::{parse_frame, Limits, ParsedFrame, ETH_HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let Ok(ParsedFrame { eth, prism: Some(p) }) = parse_frame(data, &Limits::default()) else { return };
    let mut out = vec![0xa5u8; p.frame_len()];
    let n = p.emit_frame(&eth, &mut out);
    let declared = ETH_HEADER_LEN + p.buffer_len();
    // A 1.x frame is read as 1.0 and our emitters write 1.0: compare with the minor version cleared.
    let mut want = data[..declared].to_vec();
    want[ETH_HEADER_LEN] &= 0xf0;
    assert_eq!(&out[..declared], &want[..], "re-emit differs");
    let again = parse_frame(&out[..n], &Limits::default()).expect("re-emitted frame must parse");
    assert_eq!(again.prism, Some(p), "reparse differs");
});
