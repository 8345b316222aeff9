//! AUTO: the lossless encoder with an eight-value lookahead (docs/wire-format.md section 8).
//!
//! The planner sees only candidate sets (one bit per format that represents a
//! value exactly) and the byte budget; it decides where groups start and which
//! format each value takes. Writing the values is the caller's job.

/// Candidate bits, in format-code order (the tie-break order).
pub const C_INT8: u8 = 1 << 0;
pub const C_FP16: u8 = 1 << 1;
pub const C_BF16: u8 = 1 << 2;
pub const C_FP32: u8 = 1 << 3;
pub const C_KULISCH: u8 = 1 << 4;
pub const LOOKAHEAD: usize = 8;
const MAX_GROUPS: usize = 255;
const MAX_COUNT: u32 = 65535;
const DESCRIPTOR: u32 = 4;

/// Format index 0..5 = INT8, FP16, BF16, FP32, KULISCH.
pub type FormatIndex = u8;

/// One planned group: format index and value count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlannedGroup {
    pub format: FormatIndex,
    pub count: u16,
}

/// A planned packet: its groups, the values it covers, and its body bytes.
#[derive(Debug, Clone)]
pub struct PacketPlan {
    groups: [PlannedGroup; MAX_GROUPS],
    pub group_count: usize,
    pub values: usize,
    pub body_bytes: usize,
}

impl PacketPlan {
    pub fn groups(&self) -> &[PlannedGroup] {
        &self.groups[..self.group_count]
    }
}

/// Why nothing could be planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanError {
    /// A value has no candidate format.
    NoCandidate { index: usize },
    /// A single value does not fit an empty packet.
    TooLarge,
}

fn pad(m: u32) -> u32 {
    (4 - m % 4) % 4
}

/// Byte widths of the five formats for a Kulisch width in bits.
pub fn widths(kulisch_bits: u16) -> [u32; 5] {
    [1, 2, 2, 4, 1 + kulisch_bits as u32 / 8]
}

/// Cheapest cost of the values after the first, given the state after the first decision.
fn rest_cost(masks: &[u8], w: &[u32; 5], f0: usize, m0: u32) -> u32 {
    const INF: u32 = u32::MAX / 2;
    let mut cost = [[INF; 4]; 5];
    cost[f0][m0 as usize] = 0;
    for &mask in masks {
        let mut next = [[INF; 4]; 5];
        for (f, row) in cost.iter().enumerate() {
            for (m, &c) in row.iter().enumerate() {
                if c >= INF {
                    continue;
                }
                for g in 0..5 {
                    if mask & (1 << g) == 0 {
                        continue;
                    }
                    let (nc, nm) = if g == f { (c + w[g], (m as u32 + w[g]) % 4) } else { (c + pad(m as u32) + DESCRIPTOR + w[g], w[g] % 4) };
                    let slot = &mut next[g][nm as usize];
                    if nc < *slot {
                        *slot = nc;
                    }
                }
            }
        }
        cost = next;
    }
    // Every group still open at the window's end pays its padding.
    cost.iter().flat_map(|row| row.iter().enumerate().map(|(m, &c)| c + pad(m as u32))).min().unwrap_or(INF)
}

/// The open group while a packet is being planned.
#[derive(Debug, Clone, Copy)]
struct Open {
    format: usize,
    bytes: u32,
    count: u32,
}

/// Decides the value at `masks[0]` given the open group: `Some(f)` with `continue` flag.
fn decide(masks: &[u8], w: &[u32; 5], open: Option<Open>) -> Option<(usize, bool)> {
    let window = &masks[..masks.len().min(LOOKAHEAD)];
    let mask = window[0];
    let mut best: Option<(u32, usize, bool)> = None;
    if let Some(o) = open {
        if mask & (1 << o.format) != 0 && o.count < MAX_COUNT {
            let m = (o.bytes + w[o.format]) % 4;
            let c = w[o.format] + rest_cost(&window[1..], w, o.format, m);
            best = Some((c, o.format, true));
        }
    }
    let close = open.map_or(0, |o| pad(o.bytes));
    for f in 0..5 {
        if mask & (1 << f) == 0 {
            continue;
        }
        let c = close + DESCRIPTOR + w[f] + rest_cost(&window[1..], w, f, w[f] % 4);
        if best.is_none_or(|(bc, _, _)| c < bc) {
            best = Some((c, f, false));
        }
    }
    best.map(|(_, f, cont)| (f, cont))
}

/// Plans the next packet over `masks` (candidate sets of the values still to send).
///
/// `budget` is the body byte budget (MTU − 42). With `at_end` false, the
/// packet is planned only if it closes before the lookahead runs past `masks`
/// (the caller waits for more values otherwise) and `Ok(None)` is returned.
pub fn plan_packet(masks: &[u8], kulisch_bits: u16, budget: usize, at_end: bool) -> Result<Option<PacketPlan>, PlanError> {
    let w = widths(kulisch_bits);
    let budget = budget as u32;
    let mut plan = PacketPlan { groups: [PlannedGroup::default(); MAX_GROUPS], group_count: 0, values: 0, body_bytes: 0 };
    let mut open: Option<Open> = None;
    let mut used = 0u32; // closed groups with padding + open group's descriptor and values
    let mut i = 0;
    while i < masks.len() {
        if !at_end && masks.len() - i < LOOKAHEAD {
            return Ok(None);
        }
        let Some((f, cont)) = decide(&masks[i..], &w, open) else {
            return Err(PlanError::NoCandidate { index: i });
        };
        let (new_used, new_open) = if cont {
            let o = open.unwrap_or(Open { format: f, bytes: 0, count: 0 });
            (used + w[f], Open { format: f, bytes: o.bytes + w[f], count: o.count + 1 })
        } else {
            let close = open.map_or(0, |o| pad(o.bytes));
            (used + close + DESCRIPTOR + w[f], Open { format: f, bytes: w[f], count: 1 })
        };
        let fits = new_used + pad(new_open.bytes) <= budget && (cont || plan.group_count < MAX_GROUPS);
        if !fits {
            if open.is_none() {
                return Err(PlanError::TooLarge);
            }
            break; // close this packet; the value starts the next one
        }
        if cont {
            plan.groups[plan.group_count - 1].count += 1;
        } else {
            plan.groups[plan.group_count] = PlannedGroup { format: f as u8, count: 1 };
            plan.group_count += 1;
        }
        used = new_used;
        open = Some(new_open);
        i += 1;
    }
    if i == 0 {
        return Ok(None);
    }
    plan.values = i;
    plan.body_bytes = (used + open.map_or(0, |o| pad(o.bytes))) as usize;
    Ok(Some(plan))
}
