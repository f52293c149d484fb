//! A request's params as compact JSON, byte for byte what serde_json
//! writes, with strings checked for escapes a block at a time.
//!
//! serde_json looks at each byte of a string on its own for the few that
//! JSON escapes. A large argument (a file's text, a base64 image) spent more
//! of the client's time there than anywhere else (profiles and figures in
//! `docs/benchmarks.md`). Here a string is checked 32
//! bytes at a time (a loop the compiler turns into vector instructions) and
//! its clean runs are copied whole. Numbers are written by serde_json
//! itself; the rest (the shapes of values, map keys, a `RawValue`) the way
//! its compact serializer writes them, which the tests check value by
//! value against it.

use serde::Serialize;
use serde::ser::{self, Error as _, Impossible};
use serde_json::Error;

use crate::grow::{FrameBuf, grow};

/// The struct name serde_json gives a `RawValue`: its one field's text is
/// written as it is.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// Bytes checked for escapes at once.
const BLOCK: usize = 32;

/// A serializer's method for each number type, through its `$write`.
macro_rules! each_number {
    ($write:ident: $($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method(self, v: $ty) -> Result<(), Error> {
            self.$write(v)
        }
    )*};
}

/// The compound traits whose items are elements (comma-separated values).
macro_rules! elements {
    ($($tr:ident: $method:ident),* $(,)?) => {$(
        impl<B: FrameBuf> ser::$tr for Compound<'_, '_, B> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}

/// The compound traits whose items are named fields.
macro_rules! fields {
    ($($tr:ident),* $(,)?) => {$(
        impl<B: FrameBuf> ser::$tr for Compound<'_, '_, B> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}

/// Appends `value` to `buf` as compact JSON, as `serde_json::to_writer`
/// would, growing `buf` the way frame buffers grow.
pub(crate) fn write<B: FrameBuf, T: Serialize + ?Sized>(
    buf: &mut B,
    value: &T,
) -> Result<(), Error> {
    value.serialize(&mut Compact { buf })
}

struct Compact<'a, B> {
    buf: &'a mut B,
}

impl<B: FrameBuf> Compact<'_, B> {
    #[inline]
    fn put(&mut self, data: &[u8]) {
        if self.buf.capacity() - self.buf.len() < data.len() {
            grow(self.buf, data.len(), crate::DEFAULT_MAX_FRAME_LEN);
        }
        self.buf.put(data);
    }

    fn number<N: Serialize>(&mut self, n: N) -> Result<(), Error> {
        serde_json::to_writer(&mut *self, &n)
    }

    fn string(&mut self, s: &str) {
        self.put(b"\"");
        let bytes = s.as_bytes();
        let mut start = 0;
        while let Some(at) = next_escape(bytes, start) {
            self.put(&bytes[start..at]);
            self.escape(bytes[at]);
            start = at + 1;
        }
        self.put(&bytes[start..]);
        self.put(b"\"");
    }

    fn escape(&mut self, byte: u8) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        match byte {
            b'"' => self.put(b"\\\""),
            b'\\' => self.put(b"\\\\"),
            b'\n' => self.put(b"\\n"),
            b'\r' => self.put(b"\\r"),
            b'\t' => self.put(b"\\t"),
            0x08 => self.put(b"\\b"),
            0x0c => self.put(b"\\f"),
            _ => self.put(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]),
        }
    }
}

/// Whether JSON escapes `byte` in a string.
#[inline]
fn escaped(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The first byte at or after `from` that JSON escapes.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(block) = bytes.get(at..at + BLOCK) {
        // No early exit inside the block: the whole block is one vector test.
        if block.iter().fold(false, |any, &b| any | escaped(b)) {
            break;
        }
        at += BLOCK;
    }
    bytes[at..]
        .iter()
        .position(|&b| escaped(b))
        .map(|found| at + found)
}

impl<B: FrameBuf> std::io::Write for Compact<'_, B> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.put(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A sequence, map or struct being written: what closes it, and whether an
/// element came before (so the next one needs a comma).
struct Compound<'s, 'a, B> {
    ser: &'s mut Compact<'a, B>,
    first: bool,
    close: &'static [u8],
    /// A `RawValue`: its field is written as it is.
    raw: bool,
}

impl<'s, 'a, B: FrameBuf> Compound<'s, 'a, B> {
    fn open(ser: &'s mut Compact<'a, B>, open: &[u8], close: &'static [u8]) -> Self {
        ser.put(open);
        Self {
            ser,
            first: true,
            close,
            raw: false,
        }
    }

    fn comma(&mut self) {
        if !self.first {
            self.ser.put(b",");
        }
        self.first = false;
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(&mut *self.ser)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        if self.raw {
            return value.serialize(Scalar {
                ser: &mut *self.ser,
                key: false,
            });
        }
        self.comma();
        self.ser.string(key);
        self.ser.put(b":");
        value.serialize(&mut *self.ser)
    }

    fn close(self) -> Result<(), Error> {
        self.ser.put(self.close);
        Ok(())
    }
}

impl<'s, 'a, B: FrameBuf> ser::Serializer for &'s mut Compact<'a, B> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'s, 'a, B>;
    type SerializeTuple = Compound<'s, 'a, B>;
    type SerializeTupleStruct = Compound<'s, 'a, B>;
    type SerializeTupleVariant = Compound<'s, 'a, B>;
    type SerializeMap = Compound<'s, 'a, B>;
    type SerializeStruct = Compound<'s, 'a, B>;
    type SerializeStructVariant = Compound<'s, 'a, B>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.put(if v { b"true" } else { b"false" });
        Ok(())
    }
    each_number!(number: serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64), serialize_i128(i128), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32), serialize_u64(u64), serialize_u128(u128), serialize_f32(f32), serialize_f64(f64));
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut seq = Compound::open(self, b"[", b"]");
        for byte in v {
            seq.element(byte)?;
        }
        seq.close()
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.put(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut outer = Compound::open(self, b"{", b"}");
        outer.field(variant, value)?;
        outer.close()
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Ok(Compound::open(self, b"[", b"]"))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Ok(Compound::open(self, b"[", b"]"))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Ok(Compound::open(self, b"[", b"]"))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        variant_open(self, variant, b"[", b"]}")
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Ok(Compound::open(self, b"{", b"}"))
    }
    fn serialize_struct(
        self,
        name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        if name == RAW_VALUE {
            let mut raw = Compound::open(self, b"", b"");
            raw.raw = true;
            return Ok(raw);
        }
        Ok(Compound::open(self, b"{", b"}"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        variant_open(self, variant, b"{", b"}}")
    }
}

/// `{"variant":` and the opening of its content.
fn variant_open<'s, 'a, B: FrameBuf>(
    ser: &'s mut Compact<'a, B>,
    variant: &str,
    open: &[u8],
    close: &'static [u8],
) -> Result<Compound<'s, 'a, B>, Error> {
    ser.put(b"{");
    ser.string(variant);
    ser.put(b":");
    Ok(Compound::open(ser, open, close))
}

elements!(
    SerializeSeq: serialize_element,
    SerializeTuple: serialize_element,
    SerializeTupleStruct: serialize_field,
    SerializeTupleVariant: serialize_field,
);

impl<B: FrameBuf> ser::SerializeMap for Compound<'_, '_, B> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(Scalar {
            ser: &mut *self.ser,
            key: true,
        })
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.ser.put(b":");
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

fields!(SerializeStruct, SerializeStructVariant);

/// A map key (a string, or a number or bool written as one), or a
/// `RawValue`'s text (`key: false`), written as it is.
struct Scalar<'s, 'a, B> {
    ser: &'s mut Compact<'a, B>,
    key: bool,
}

impl<B: FrameBuf> Scalar<'_, '_, B> {
    fn refused(&self) -> Error {
        Error::custom(if self.key {
            "key must be a string"
        } else {
            "a RawValue holds a string"
        })
    }

    /// A number or bool as a key: quoted.
    fn quoted<N: Serialize>(self, n: N) -> Result<(), Error> {
        if !self.key {
            return Err(self.refused());
        }
        self.ser.put(b"\"");
        self.ser.number(n)?;
        self.ser.put(b"\"");
        Ok(())
    }

    /// A float as a key: quoted, if it is a number at all.
    fn float<N: Serialize>(self, finite: bool, n: N) -> Result<(), Error> {
        if self.key && !finite {
            return Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ));
        }
        self.quoted(n)
    }
}

impl<B: FrameBuf> ser::Serializer for Scalar<'_, '_, B> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        if self.key {
            self.ser.string(v);
        } else {
            self.ser.put(v.as_bytes());
        }
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        if !self.key {
            return Err(self.refused());
        }
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        if !self.key {
            return Err(self.refused());
        }
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(v)
    }
    each_number!(quoted: serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64), serialize_i128(i128), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32), serialize_u64(u64), serialize_u128(u128));
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.float(v.is_finite(), v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.float(v.is_finite(), v)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(self.refused())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(self.refused())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(self.refused())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(self.refused())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(self.refused())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(self.refused())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(self.refused())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(self.refused())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(self.refused())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(self.refused())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(self.refused())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(self.refused())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Serializer;
    use serde_json::Value;
    use serde_json::value::RawValue;

    use super::*;

    fn ours<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        write(&mut out, value).map(|()| out)
    }

    /// Ours and serde_json's, the same bytes (or both refused).
    fn same<T: Serialize + ?Sized>(value: &T) {
        match (ours(value), serde_json::to_vec(value)) {
            (Ok(a), Ok(b)) => assert_eq!(
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b),
                "written differently"
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("ours {a:?}, serde_json's {b:?}"),
        }
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Newtype(u8);

    #[derive(Serialize)]
    struct Pair(i32, &'static str);

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Key {
        Plain,
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(String),
        Tuple(u8, bool),
        Struct { a: Option<u8>, b: () },
    }

    #[derive(Serialize)]
    struct Everything {
        bools: (bool, bool),
        ints: (i8, i16, i32, i64, i128),
        uints: (u8, u16, u32, u64, u128),
        floats: (f32, f64, f64, f32),
        text: (char, char, &'static str),
        unit: (Unit, ()),
        newtype: Newtype,
        pair: Pair,
        shapes: Vec<Shape>,
        empty: (Vec<u8>, BTreeMap<String, u8>),
        by_int: BTreeMap<i64, u8>,
        by_bool: BTreeMap<bool, u8>,
        by_char: BTreeMap<char, u8>,
        by_variant: BTreeMap<Key, u8>,
        raw: Box<RawValue>,
        #[serde(serialize_with = "as_bytes")]
        bytes: Vec<u8>,
    }

    fn as_bytes<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    #[test]
    fn every_kind_of_value_is_written_as_serde_json_writes_it() {
        let everything = Everything {
            bools: (true, false),
            ints: (-8, -16, -32, i64::MIN, i128::MIN),
            uints: (8, 16, 32, u64::MAX, u128::MAX),
            floats: (1.5, -0.1, f64::NAN, f32::INFINITY),
            text: ('\u{e9}', '"', "tab\there \u{1F600}"),
            unit: (Unit, ()),
            newtype: Newtype(7),
            pair: Pair(-1, "two"),
            shapes: vec![
                Shape::Unit,
                Shape::Newtype("n\n".into()),
                Shape::Tuple(1, true),
                Shape::Struct { a: None, b: () },
                Shape::Struct { a: Some(3), b: () },
            ],
            empty: (Vec::new(), BTreeMap::new()),
            by_int: [(-3, 1), (4, 2)].into(),
            by_bool: [(false, 1), (true, 2)].into(),
            by_char: [('\n', 1), ('k', 2)].into(),
            by_variant: [(Key::Plain, 1)].into(),
            raw: RawValue::from_string(r#"{"kept" : [1, 2]}"#.into()).unwrap(),
            bytes: vec![0, 1, 255],
        };
        same(&everything);
        same(&Some(Unit));
        same(&Bytes);
        same(&None::<u8>);
    }

    #[test]
    fn float_keys_and_keys_that_are_not_strings_are_as_serde_json_has_them() {
        let mut map = serde_json::Map::new();
        map.insert("x".into(), Value::Null);
        for k in [1.25, -0.0, f64::NAN, f64::INFINITY] {
            same(&MapOf(vec![(k, 1u8)]));
        }
        same(&MapOf(vec![(1.5f32, 1u8)]));
        same(&MapOf(vec![(f32::NAN, 1u8)]));
        same(&MapOf(vec![(vec![1u8], 1u8)]));
        same(&MapOf(vec![(Bytes, 1u8)]));
        same(&MapOf(vec![((), 1u8)]));
        same(&MapOf(vec![(None::<u8>, 1u8)]));
        same(&MapOf(vec![(Some("k"), 1u8)]));
        same(&MapOf(vec![(Newtype(3), 1u8)]));
        same(&MapOf(vec![(Unit, 1u8)]));
        same(&MapOf(vec![(Shape::Tuple(1, true), 1u8)]));
        same(&MapOf(vec![(Shape::Newtype("n".into()), 1u8)]));
        same(&MapOf(vec![(map, 1u8)]));
    }

    /// A value serde writes as bytes.
    struct Bytes;

    impl Serialize for Bytes {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(b"ab")
        }
    }

    /// A map from pairs, for keys no map type takes.
    struct MapOf<K, V>(Vec<(K, V)>);

    impl<K: Serialize, V: Serialize> Serialize for MapOf<K, V> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
        }
    }

    #[test]
    fn a_raw_value_holds_only_its_text() {
        struct NotText;
        impl Serialize for NotText {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct as _;
                let mut raw = s.serialize_struct(RAW_VALUE, 1)?;
                raw.serialize_field(RAW_VALUE, &5u8)?;
                raw.end()
            }
        }
        let refused = ours(&NotText).unwrap_err();
        assert!(refused.to_string().contains("RawValue"), "{refused}");
    }

    #[test]
    fn an_escape_anywhere_in_a_block_is_found() {
        for len in [0, 1, 31, 32, 33, 63, 64, 65, 100] {
            for at in 0..len {
                for escape in [
                    '"', '\\', '\n', '\u{0}', '\u{1f}', '\u{8}', '\u{c}', '\r', '\t',
                ] {
                    let mut text: Vec<char> = "a\u{e9}".chars().cycle().take(len).collect();
                    text[at] = escape;
                    let text: String = text.into_iter().collect();
                    same(&text);
                }
            }
        }
        // Bytes that are not escaped: DEL, high bytes, a space.
        same("\u{7f} \u{80}\u{7ff}".repeat(20).as_str());
    }

    #[test]
    fn a_frame_grows_as_frame_buffers_grow() {
        // A large string takes the one large step, not a chain of doublings.
        let text = "x".repeat(crate::grow::LARGE_FRAME_LEN);
        let mut out = Vec::new();
        write(&mut out, &text).unwrap();
        assert_eq!(out.len(), text.len() + 2);
        let whole = crate::grow::grow_frame_buffer_len(crate::DEFAULT_MAX_FRAME_LEN);
        assert_eq!(out.capacity(), whole);
        // So does a frame that becomes large with a string appended to it.
        let mut out = Vec::with_capacity(256 << 10);
        out.resize(200 << 10, b' ');
        write(&mut out, &"x".repeat(100 << 10)).unwrap();
        assert_eq!(out.capacity(), whole);
        // A small one is written in the room there is.
        let mut small = Vec::with_capacity(64);
        write(&mut small, &serde_json::json!({"k": [1, "two"]})).unwrap();
        assert_eq!(small.capacity(), 64);
        assert_eq!(small, br#"{"k":[1,"two"]}"#);
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map(any::<String>(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(value in any_value()) {
            prop_assert_eq!(ours(&value).unwrap(), serde_json::to_vec(&value).unwrap());
        }
    }
}
