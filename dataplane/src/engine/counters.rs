//! The node's counters: one definition gives the struct the engine counts
//! in, its JSON (serde: what prism-switch writes under `"engine"` and what
//! its readers parse back), and the RTL node's counter array (`Counters::FIELDS`,
//! from which `prism_pkg.sv`'s `CNT_*` indices are generated).

use super::op::DataReject;
use crate::wire::Reason;
use serde::{Deserialize, Serialize};

/// One field of `Counters`: its name, how many `u64` it holds (1, or the
/// length of a counter array indexed by reason or status) and whether the
/// RTL node counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterField {
    pub name: &'static str,
    pub len: usize,
    pub in_rtl: bool,
}

/// A counter field's storage: one `u64` or an array of them.
trait Slot {
    const LEN: usize;
    fn slice(&self) -> &[u64];
    fn slice_mut(&mut self) -> &mut [u64];
}

impl Slot for u64 {
    const LEN: usize = 1;
    fn slice(&self) -> &[u64] {
        std::slice::from_ref(self)
    }
    fn slice_mut(&mut self) -> &mut [u64] {
        std::slice::from_mut(self)
    }
}

impl<const N: usize> Slot for [u64; N] {
    const LEN: usize = N;
    fn slice(&self) -> &[u64] {
        self
    }
    fn slice_mut(&mut self) -> &mut [u64] {
        self
    }
}

/// Defines `Counters` and its field table from one list. Each field is
/// marked `rtl` (the RTL node counts it too) or `sw` (the software only).
macro_rules! counters {
    (@rtl rtl) => { true };
    (@rtl sw) => { false };
    ($(#[$sm:meta])* pub struct $name:ident { $( $(#[$fm:meta])* $place:ident $field:ident : $ty:ty, )* }) => {
        $(#[$sm])*
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
        }

        impl $name {
            /// Every field, in declaration order.
            pub const FIELDS: &'static [CounterField] = &[
                $( CounterField { name: stringify!($field), len: <$ty as Slot>::LEN, in_rtl: counters!(@rtl $place) }, )*
            ];

            /// Every field with its values, in `FIELDS` order.
            pub fn fields(&self) -> impl Iterator<Item = (&'static CounterField, &[u64])> {
                Self::FIELDS.iter().zip([$( Slot::slice(&self.$field), )*])
            }

            /// Every field with its values to change, in `FIELDS` order.
            pub fn fields_mut(&mut self) -> impl Iterator<Item = (&'static CounterField, &mut [u64])> {
                Self::FIELDS.iter().zip([$( Slot::slice_mut(&mut self.$field), )*])
            }
        }
    };
}

counters! {
    /// Counters, by what happened to each CONTROL frame. Serialised (serde)
    /// with prism-switch's JSON keys: the CONTROL counters with a `control_`
    /// prefix, the reject arrays as objects keyed by reason name.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Counters {
        #[serde(rename = "control_accepted")]
        rtl accepted: u64,
        #[serde(rename = "control_retries_answered")]
        rtl retries_answered: u64,
        /// Frames the parser refused, by `Reason::index()`.
        #[serde(with = "by_reason")]
        rtl malformed: [u64; Reason::COUNT],
        #[serde(rename = "control_untrusted_source")]
        rtl untrusted_source: u64,
        rtl not_for_us: u64,
        /// ACKs sent with a failure status, by status code.
        #[serde(rename = "control_refused_by_status")]
        rtl refused: [u64; 8],
        rtl data_applied: u64,
        rtl data_duplicates: u64,
        /// DATA not applied, by `DataReject::index()`.
        #[serde(with = "by_data_reject")]
        rtl data_rejected: [u64; DataReject::ALL.len()],
        /// PROGRESS not applied: the operation has no feedback, or is not installed.
        rtl progress_ignored: u64,
        /// PROGRESS applied to one of the node's outgoing streams.
        sw progress_applied: u64,
        /// PROGRESS whose stream or binding did not match.
        sw progress_rejected: u64,
        /// PROGRESS frames the node sent (to contributors and to its parent).
        sw progress_sent: u64,
        rtl results_sent: u64,
        /// Partial DATA sent to the parent.
        sw partials_sent: u64,
        /// RESULT frames from the parent taken, and copies of them seen again.
        sw results_received: u64,
        sw results_duplicates: u64,
        /// RESULT frames forwarded from the parent, summed over result paths.
        sw results_forwarded: u64,
    }
}

impl Counters {
    /// How many `u32` the RTL node's counter array holds.
    pub const RTL_LEN: usize = {
        let mut n = 0;
        let mut i = 0;
        while i < Counters::FIELDS.len() {
            if Counters::FIELDS[i].in_rtl {
                n += Counters::FIELDS[i].len;
            }
            i += 1;
        }
        n
    };

    /// The RTL node's counter array: each counted field and where it starts,
    /// the fields in `FIELDS` order, packed (an array field takes `len` slots).
    pub fn rtl_layout() -> impl Iterator<Item = (&'static CounterField, usize)> {
        Self::FIELDS.iter().filter(|f| f.in_rtl).scan(0, |at, f| {
            let start = *at;
            *at += f.len;
            Some((f, start))
        })
    }

    /// The counters from the RTL node's array (`rtl_layout`); the fields it
    /// does not count are zero, and so are slots past the end of `raw`.
    pub fn from_rtl(raw: &[u32]) -> Counters {
        let mut c = Counters::default();
        let starts: Vec<usize> = Self::rtl_layout().map(|(_, at)| at).collect();
        for ((_, values), at) in c.fields_mut().filter(|(f, _)| f.in_rtl).zip(starts) {
            for (i, v) in values.iter_mut().enumerate() {
                *v = raw.get(at + i).copied().unwrap_or(0) as u64;
            }
        }
        c
    }
}

/// A counter array as a JSON object keyed by name; every name must be there.
mod named {
    use serde::de::{Error, MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::fmt;

    pub fn serialize<S: Serializer>(values: &[u64], names: &[&'static str], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(values.len()))?;
        for (n, v) in names.iter().zip(values) {
            m.serialize_entry(n, v)?;
        }
        m.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(names: [&'static str; N], d: D) -> Result<[u64; N], D::Error> {
        struct Names<const N: usize>([&'static str; N]);
        impl<'de, const N: usize> Visitor<'de> for Names<N> {
            type Value = [u64; N];
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an object of {N} counters by name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = [0; N];
                let mut seen = [false; N];
                while let Some(k) = map.next_key::<String>()? {
                    let i = self.0.iter().position(|n| *n == k).ok_or_else(|| A::Error::unknown_field(&k, &[]))?;
                    out[i] = map.next_value()?;
                    seen[i] = true;
                }
                match seen.iter().position(|s| !s) {
                    Some(i) => Err(A::Error::missing_field(self.0[i])),
                    None => Ok(out),
                }
            }
        }
        d.deserialize_map(Names(names))
    }
}

mod by_reason {
    use super::{named, Reason};
    use serde::{Deserializer, Serializer};

    fn names() -> [&'static str; Reason::COUNT] {
        std::array::from_fn(|i| Reason::ALL[i].name())
    }
    pub fn serialize<S: Serializer>(v: &[u64; Reason::COUNT], s: S) -> Result<S::Ok, S::Error> {
        named::serialize(v, &names(), s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u64; Reason::COUNT], D::Error> {
        named::deserialize(names(), d)
    }
}

mod by_data_reject {
    use super::{named, DataReject};
    use serde::{Deserializer, Serializer};

    const N: usize = DataReject::ALL.len();
    fn names() -> [&'static str; N] {
        DataReject::ALL.map(DataReject::name)
    }
    pub fn serialize<S: Serializer>(v: &[u64; N], s: S) -> Result<S::Ok, S::Error> {
        named::serialize(v, &names(), s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u64; N], D::Error> {
        named::deserialize(names(), d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every slot of every field a different number.
    fn numbered() -> Counters {
        let mut c = Counters::default();
        let mut n = 0;
        for (_, values) in c.fields_mut() {
            for v in values {
                n += 1;
                *v = n;
            }
        }
        c
    }

    #[test]
    fn indices_agree_with_the_names() {
        assert!(Reason::ALL.iter().enumerate().all(|(i, r)| r.index() == i));
        assert!(DataReject::ALL.iter().enumerate().all(|(i, r)| r.index() == i));
    }

    #[test]
    fn json_keys_are_prism_switchs() {
        let c = numbered();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["control_accepted"], json!(c.accepted));
        assert_eq!(v["control_retries_answered"], json!(c.retries_answered));
        assert_eq!(v["control_untrusted_source"], json!(c.untrusted_source));
        assert_eq!(v["control_refused_by_status"], json!(c.refused.to_vec()));
        assert_eq!(v["results_forwarded"], json!(c.results_forwarded));
        assert_eq!(v["malformed"][Reason::BadHoles.name()], json!(c.malformed[Reason::BadHoles.index()]));
        assert_eq!(v["data_rejected"]["overlap"], json!(c.data_rejected[DataReject::Overlap.index()]));
        assert_eq!(v["malformed"].as_object().unwrap().len(), Reason::COUNT);
        assert_eq!(v.as_object().unwrap().len(), Counters::FIELDS.len());
        let back: Counters = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn a_missing_or_unknown_reason_is_an_error() {
        let mut v = serde_json::to_value(numbered()).unwrap();
        v["malformed"].as_object_mut().unwrap().remove(Reason::BadHoles.name());
        assert!(serde_json::from_value::<Counters>(v.clone()).is_err());
        v["malformed"][Reason::BadHoles.name()] = json!(1);
        assert!(serde_json::from_value::<Counters>(v.clone()).is_ok());
        v["data_rejected"]["no_such_reason"] = json!(1);
        assert!(serde_json::from_value::<Counters>(v).is_err());
    }

    #[test]
    fn rtl_array_holds_the_rtl_fields_packed() {
        let fields: Vec<_> = Counters::rtl_layout().collect();
        assert_eq!(fields.first().map(|(f, at)| (f.name, *at)), Some(("accepted", 0)));
        let last = fields.last().unwrap();
        assert_eq!(last.1 + last.0.len, Counters::RTL_LEN);
        assert!(fields.windows(2).all(|w| w[0].1 + w[0].0.len == w[1].1));
        assert!(fields.iter().all(|(f, _)| f.in_rtl));
        // Read back: what the RTL counts comes through, the rest stays zero.
        let raw: Vec<u32> = (1..=Counters::RTL_LEN as u32).collect();
        let c = Counters::from_rtl(&raw);
        assert_eq!(c.accepted, 1);
        assert_eq!(c.malformed[0], 3);
        assert_eq!(c.results_sent, Counters::RTL_LEN as u64);
        assert_eq!((c.progress_applied, c.results_forwarded), (0, 0));
        let sum: u64 = c.fields().flat_map(|(_, v)| v.iter()).sum();
        assert_eq!(sum, raw.iter().map(|&x| x as u64).sum::<u64>());
    }
}
