//! CONTROL: the 32-byte header and the bodies of STAGE, ACK and CAPS_RESPONSE.

use super::codes::{
    caps_bits, direction, offsets as o, AccumulatorPolicy, AckStatus, Command, FormatCode, OutputFormat, PartialPolicy, PeerKind, Role, Semantics, ACK_BODY_LEN, BINDING_RECORD_LEN,
    CAPABILITY_RECORD_LEN, CONTEXT_RECORD_LEN, CONTROL_HEADER_LEN, CONTROL_WORD_LEN, VERSION,
};
use super::{at, packet_view, view_fields, Error, FieldIo, Identity, Mac, Reason, Record, Records, Result};

const HEADER_END: usize = CONTROL_WORD_LEN + CONTROL_HEADER_LEN;

packet_view!(
    /// Zero-copy view of a CONTROL packet, starting at the control word.
    ControlPacket
);

impl<T: AsRef<[u8]>> ControlPacket<T> {
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_END {
            return Err(Error::new(Reason::TruncatedHeader, len));
        }
        if len != HEADER_END + self.body_len() as usize {
            return Err(Error::new(Reason::BodyLengthMismatch, o::control::BODY_LEN.start));
        }
        Ok(())
    }
    pub fn command(&self) -> Command {
        Command::from(self.command_code())
    }
    pub fn body(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (HEADER_END + self.body_len() as usize).min(b.len());
        &b[HEADER_END..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ControlPacket<T> {
    pub fn body_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_END..]
    }
}

view_fields!(ControlPacket {
    version / set_version: u8 = at(o::VERSION);
    class_code / set_class_code: u8 = at(o::CLASS);
    txn / set_txn: u32 = o::control::TXN;
    src_ep / set_src_ep: u16 = o::control::SRC_EP;
    dst_ep / set_dst_ep: u16 = o::control::DST_EP;
    command_code / set_command_code: u8 = at(o::control::COMMAND);
    status / set_status: u8 = at(o::control::STATUS);
    body_len / set_body_len: u16 = o::control::BODY_LEN;
    frag_index / set_frag_index: u8 = at(o::control::FRAG_INDEX);
    frag_count / set_frag_count: u8 = at(o::control::FRAG_COUNT);
});

/// The STAGE context record: what the operation is and which resources it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextRecord {
    pub role: Role,
    pub semantics: Semantics,
    pub input_format: FormatCode,
    pub accumulator: AccumulatorPolicy,
    pub partial: PartialPolicy,
    pub output: OutputFormat,
    pub kulisch_width: u16,
    pub vector_len: u32,
    pub dest_rank: u16,
    pub mtu: u16,
    pub terms: u32,
    pub window_elements: u32,
    pub window_intervals: u16,
    pub replay_depth: u16,
    pub window_bytes: u32,
    pub binding_count: u16,
}

impl Record for ContextRecord {
    const LEN: usize = CONTEXT_RECORD_LEN;
    fn read(b: &[u8]) -> Self {
        use o::context as c;
        ContextRecord {
            role: b[c::ROLE].into(),
            semantics: b[c::SEMANTICS].into(),
            input_format: b[c::INPUT_FORMAT].into(),
            accumulator: b[c::ACCUMULATOR].into(),
            partial: b[c::PARTIAL].into(),
            output: b[c::OUTPUT].into(),
            kulisch_width: u16::get(b, c::KULISCH_WIDTH),
            vector_len: u32::get(b, c::VECTOR_LEN),
            dest_rank: u16::get(b, c::DEST_RANK),
            mtu: u16::get(b, c::MTU),
            terms: u32::get(b, c::TERMS),
            window_elements: u32::get(b, c::WINDOW_ELEMENTS),
            window_intervals: u16::get(b, c::WINDOW_INTERVALS),
            replay_depth: u16::get(b, c::REPLAY_DEPTH),
            window_bytes: u32::get(b, c::WINDOW_BYTES),
            binding_count: u16::get(b, c::BINDING_COUNT),
        }
    }
    fn write(&self, b: &mut [u8]) {
        use o::context as c;
        b[c::ROLE] = self.role.into();
        b[c::SEMANTICS] = self.semantics.into();
        b[c::INPUT_FORMAT] = self.input_format.into();
        b[c::ACCUMULATOR] = self.accumulator.into();
        b[c::PARTIAL] = self.partial.into();
        b[c::OUTPUT] = self.output.into();
        u16::set(b, c::KULISCH_WIDTH, self.kulisch_width);
        u32::set(b, c::VECTOR_LEN, self.vector_len);
        u16::set(b, c::DEST_RANK, self.dest_rank);
        u16::set(b, c::MTU, self.mtu);
        u32::set(b, c::TERMS, self.terms);
        u32::set(b, c::WINDOW_ELEMENTS, self.window_elements);
        u16::set(b, c::WINDOW_INTERVALS, self.window_intervals);
        u16::set(b, c::REPLAY_DEPTH, self.replay_depth);
        u32::set(b, c::WINDOW_BYTES, self.window_bytes);
        u16::set(b, c::BINDING_COUNT, self.binding_count);
        u16::set(b, c::RESERVED, 0);
    }
}

/// One local peer of an operation: a rank, a child subtree or the parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingRecord {
    /// Bit set of `codes::direction`.
    pub directions: u8,
    pub peer_kind: PeerKind,
    pub stream_id: u16,
    pub local_ep: u16,
    pub peer_ep: u16,
    pub peer_mac: Mac,
    pub port: u16,
    pub rank: u16,
    pub terms: u16,
}

impl BindingRecord {
    pub fn has(&self, dir: u8) -> bool {
        self.directions & dir != 0
    }
}

impl Record for BindingRecord {
    const LEN: usize = BINDING_RECORD_LEN;
    fn read(b: &[u8]) -> Self {
        use o::binding as f;
        let mut mac = [0u8; 6];
        mac.copy_from_slice(&b[f::PEER_MAC]);
        BindingRecord {
            directions: b[f::DIRECTIONS],
            peer_kind: b[f::PEER_KIND].into(),
            stream_id: u16::get(b, f::STREAM_ID),
            local_ep: u16::get(b, f::LOCAL_EP),
            peer_ep: u16::get(b, f::PEER_EP),
            peer_mac: Mac(mac),
            port: u16::get(b, f::PORT),
            rank: u16::get(b, f::RANK),
            terms: u16::get(b, f::TERMS),
        }
    }
    fn write(&self, b: &mut [u8]) {
        use o::binding as f;
        b[f::DIRECTIONS] = self.directions;
        b[f::PEER_KIND] = self.peer_kind.into();
        u16::set(b, f::STREAM_ID, self.stream_id);
        u16::set(b, f::LOCAL_EP, self.local_ep);
        u16::set(b, f::PEER_EP, self.peer_ep);
        b[f::PEER_MAC].copy_from_slice(&self.peer_mac.0);
        u16::set(b, f::PORT, self.port);
        u16::set(b, f::RANK, self.rank);
        u16::set(b, f::TERMS, self.terms);
    }
}

/// One supported (input, accumulator, partial, output) tuple with its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityRecord {
    pub input_format: FormatCode,
    pub accumulator: AccumulatorPolicy,
    pub partial: PartialPolicy,
    pub output: OutputFormat,
    pub roles: u8,
    pub semantics: u8,
    pub mtus: u8,
    pub max_vector: u32,
    pub max_terms: u32,
    pub kulisch_min: u16,
    pub kulisch_max: u16,
    pub max_contributors: u16,
    pub max_result_paths: u16,
    pub window_elements: u32,
    pub window_intervals: u16,
    pub replay_depth: u16,
    pub window_bytes: u32,
}

impl CapabilityRecord {
    /// Whether the record covers a context's tuple, role, semantics, MTU,
    /// vector length, terms and (under KULISCH_FIXED) accumulator width:
    /// what an AM matches before STAGE, and a node checks on STAGE.
    pub fn covers(&self, x: &ContextRecord) -> bool {
        // Roles and semantics are bit `code - 1` of their masks.
        let bit = |code: u8| code.checked_sub(1).and_then(|b| 1u8.checked_shl(b as u32)).unwrap_or(0);
        let mtu_bit = match x.mtu {
            576 => caps_bits::MTU_576,
            1500 => caps_bits::MTU_1500,
            _ => caps_bits::MTU_9000,
        };
        self.input_format == x.input_format
            && self.accumulator == x.accumulator
            && self.partial == x.partial
            && self.output == x.output
            && self.roles & bit(u8::from(x.role)) != 0
            && self.semantics & bit(u8::from(x.semantics)) != 0
            && self.mtus & mtu_bit != 0
            && x.vector_len <= self.max_vector
            && x.terms <= self.max_terms
            && (x.accumulator != AccumulatorPolicy::KULISCH_FIXED || (self.kulisch_min..=self.kulisch_max).contains(&x.kulisch_width))
    }
}

impl Record for CapabilityRecord {
    const LEN: usize = CAPABILITY_RECORD_LEN;
    fn read(b: &[u8]) -> Self {
        use o::caps as c;
        CapabilityRecord {
            input_format: b[c::INPUT_FORMAT].into(),
            accumulator: b[c::ACCUMULATOR].into(),
            partial: b[c::PARTIAL].into(),
            output: b[c::OUTPUT].into(),
            roles: b[c::ROLES],
            semantics: b[c::SEMANTICS],
            mtus: b[c::MTUS],
            max_vector: u32::get(b, c::MAX_VECTOR),
            max_terms: u32::get(b, c::MAX_TERMS),
            kulisch_min: u16::get(b, c::KULISCH_MIN),
            kulisch_max: u16::get(b, c::KULISCH_MAX),
            max_contributors: u16::get(b, c::MAX_CONTRIBUTORS),
            max_result_paths: u16::get(b, c::MAX_RESULT_PATHS),
            window_elements: u32::get(b, c::WINDOW_ELEMENTS),
            window_intervals: u16::get(b, c::WINDOW_INTERVALS),
            replay_depth: u16::get(b, c::REPLAY_DEPTH),
            window_bytes: u32::get(b, c::WINDOW_BYTES),
        }
    }
    fn write(&self, b: &mut [u8]) {
        use o::caps as c;
        b[c::INPUT_FORMAT] = self.input_format.into();
        b[c::ACCUMULATOR] = self.accumulator.into();
        b[c::PARTIAL] = self.partial.into();
        b[c::OUTPUT] = self.output.into();
        b[c::ROLES] = self.roles;
        b[c::SEMANTICS] = self.semantics;
        b[c::MTUS] = self.mtus;
        b[c::RESERVED] = 0;
        u32::set(b, c::MAX_VECTOR, self.max_vector);
        u32::set(b, c::MAX_TERMS, self.max_terms);
        u16::set(b, c::KULISCH_MIN, self.kulisch_min);
        u16::set(b, c::KULISCH_MAX, self.kulisch_max);
        u16::set(b, c::MAX_CONTRIBUTORS, self.max_contributors);
        u16::set(b, c::MAX_RESULT_PATHS, self.max_result_paths);
        u32::set(b, c::WINDOW_ELEMENTS, self.window_elements);
        u16::set(b, c::WINDOW_INTERVALS, self.window_intervals);
        u16::set(b, c::REPLAY_DEPTH, self.replay_depth);
        u32::set(b, c::WINDOW_BYTES, self.window_bytes);
    }
}

/// The ACK body: which command it answers and an optional detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckBody {
    pub command: Command,
    /// For INVALID_BINDING, 1 + the index of the first bad binding; otherwise 0.
    pub detail: u16,
}

/// The body of a CONTROL packet, by command.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ControlBody<'a> {
    /// COMMIT, COMPLETE, RELEASE, ABORT, CAPS_QUERY.
    Empty,
    Stage {
        context: ContextRecord,
        bindings: Records<'a, BindingRecord>,
    },
    Ack {
        status: AckStatus,
        body: AckBody,
    },
    Caps(Records<'a, CapabilityRecord>),
}

impl ControlBody<'_> {
    pub fn buffer_len(&self) -> usize {
        match self {
            ControlBody::Empty => 0,
            ControlBody::Stage { bindings, .. } => CONTEXT_RECORD_LEN + bindings.byte_len(),
            ControlBody::Ack { .. } => ACK_BODY_LEN,
            ControlBody::Caps(r) => r.byte_len(),
        }
    }
}

/// A validated CONTROL packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControlRepr<'a> {
    pub identity: Identity,
    pub txn: u32,
    pub src_ep: u16,
    pub dst_ep: u16,
    pub command: Command,
    pub frag_index: u8,
    pub frag_count: u8,
    pub body: ControlBody<'a>,
}

impl<'a> ControlRepr<'a> {
    /// Validates framing (docs/wire-format.md section 4). Codes inside a STAGE
    /// context are left for the control state machine, which answers them with
    /// an ACK status. `base` is the frame offset of the control word.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &ControlPacket<&'a T>, base: usize) -> Result<Self> {
        let bytes: &'a [u8] = <T as AsRef<[u8]>>::as_ref(packet.buffer);
        let p = ControlPacket::new_unchecked(bytes);
        p.check_len().map_err(|e| Error::new(e.reason, e.offset + base))?;
        let err = |r, off: usize| Err(Error::new(r, base + off));
        let command = p.command();
        if !command.is_known() {
            return err(Reason::UnknownCommand, o::control::COMMAND);
        }
        let status = p.status();
        if command == Command::ACK {
            if !AckStatus::from(status).is_known() {
                return err(Reason::UnknownStatus, o::control::STATUS);
            }
        } else if status != 0 {
            return err(Reason::ReservedNonZero, o::control::STATUS);
        }
        let (fi, fc) = (p.frag_index(), p.frag_count());
        let frag_ok = if command == Command::CAPS_RESPONSE { fc >= 1 && fi < fc } else { fi == 0 && fc == 1 };
        if !frag_ok {
            return err(Reason::BadFragment, o::control::FRAG_INDEX);
        }
        let body: &'a [u8] = &bytes[HEADER_END..];
        let bad_len = || Err(Error::new(Reason::BadBodyLength, base + o::control::BODY_LEN.start));
        let parsed = match command {
            Command::STAGE => {
                if body.len() < CONTEXT_RECORD_LEN {
                    return bad_len();
                }
                let context = ContextRecord::read(&body[..CONTEXT_RECORD_LEN]);
                if body.len() != CONTEXT_RECORD_LEN + context.binding_count as usize * BINDING_RECORD_LEN {
                    return bad_len();
                }
                if u16::get(body, o::context::RESERVED) != 0 {
                    return err(Reason::ReservedNonZero, o::control::BODY + o::context::RESERVED.start);
                }
                let wire = &body[CONTEXT_RECORD_LEN..];
                for (i, b) in wire.chunks_exact(BINDING_RECORD_LEN).enumerate() {
                    if b[o::binding::DIRECTIONS] & direction::RESERVED != 0 {
                        let off = o::control::BODY + CONTEXT_RECORD_LEN + i * BINDING_RECORD_LEN;
                        return err(Reason::ReservedNonZero, off);
                    }
                }
                ControlBody::Stage { context, bindings: Records::Wire(wire) }
            }
            Command::ACK => {
                if body.len() != ACK_BODY_LEN {
                    return bad_len();
                }
                if body[o::ack::RESERVED] != 0 {
                    return err(Reason::ReservedNonZero, o::control::BODY + o::ack::RESERVED);
                }
                ControlBody::Ack { status: AckStatus::from(status), body: AckBody { command: body[o::ack::COMMAND].into(), detail: u16::get(body, o::ack::DETAIL) } }
            }
            Command::CAPS_RESPONSE => {
                if !body.len().is_multiple_of(CAPABILITY_RECORD_LEN) {
                    return bad_len();
                }
                for (i, r) in body.chunks_exact(CAPABILITY_RECORD_LEN).enumerate() {
                    if r[o::caps::RESERVED] != 0 {
                        let off = o::control::BODY + i * CAPABILITY_RECORD_LEN + o::caps::RESERVED;
                        return err(Reason::ReservedNonZero, off);
                    }
                }
                ControlBody::Caps(Records::Wire(body))
            }
            _ => {
                if !body.is_empty() {
                    return bad_len();
                }
                ControlBody::Empty
            }
        };
        Ok(ControlRepr { identity: p.identity(), txn: p.txn(), src_ep: p.src_ep(), dst_ep: p.dst_ep(), command, frag_index: fi, frag_count: fc, body: parsed })
    }

    pub fn status(&self) -> AckStatus {
        match self.body {
            ControlBody::Ack { status, .. } => status,
            _ => AckStatus::OK,
        }
    }

    pub fn buffer_len(&self) -> usize {
        HEADER_END + self.body.buffer_len()
    }

    /// Writes control word, header and body into `buf[..buffer_len()]`.
    pub fn emit(&self, buf: &mut [u8]) {
        let len = self.buffer_len();
        let mut p = ControlPacket::new_unchecked(&mut buf[..len]);
        p.set_version(VERSION);
        p.set_class_code(super::Class::CONTROL.into());
        p.set_identity(&self.identity);
        p.set_txn(self.txn);
        p.set_src_ep(self.src_ep);
        p.set_dst_ep(self.dst_ep);
        p.set_command_code(self.command.into());
        p.set_status(self.status().into());
        p.set_body_len(self.body.buffer_len() as u16);
        p.set_frag_index(self.frag_index);
        p.set_frag_count(self.frag_count);
        let body = p.body_mut();
        match &self.body {
            ControlBody::Empty => {}
            ControlBody::Stage { context, bindings } => {
                context.write(&mut body[..CONTEXT_RECORD_LEN]);
                bindings.write(&mut body[CONTEXT_RECORD_LEN..]);
            }
            ControlBody::Ack { body: ack, .. } => {
                body[o::ack::COMMAND] = ack.command.into();
                body[o::ack::RESERVED] = 0;
                u16::set(body, o::ack::DETAIL, ack.detail);
            }
            ControlBody::Caps(records) => records.write(body),
        }
    }
}
