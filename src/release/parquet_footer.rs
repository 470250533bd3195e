//! A Parquet footer checked before the parquet crate decodes it.
//!
//! The crate trusts the footer: a negative offset or size is cast to a huge unsigned one
//! (and panics), a schema element that declares 2^31 children is allocated for. So the
//! footer's Thrift (compact protocol) is walked here first, with every length bounded by the
//! bytes that hold it, and every offset, size and count the decoder will act on is checked
//! against the file: a footer that fails is a damaged file, reported as such, and never
//! reaches the decoder.

/// The largest footer read: real files with thousands of row groups stay far below it.
pub const MAX_FOOTER_BYTES: u64 = 64 << 20;
/// Schema nesting deeper than this is refused (the decoder recurses per level).
const MAX_DEPTH: usize = 64;
/// A column chunk that declares more than this uncompressed is refused: it is what the
/// decoder may allocate for one chunk.
const MAX_CHUNK_UNCOMPRESSED: i64 = 4 << 30;

/// What the walk found, for the checks.
#[derive(Debug, Default)]
struct Meta {
    /// Where some values lie in the footer, for tests that damage them.
    spans: Vec<(&'static str, std::ops::Range<usize>)>,
    schema_children: Vec<Option<i64>>,
    num_rows: Option<i64>,
    row_groups: Vec<RowGroup>,
}

#[derive(Debug, Default)]
struct RowGroup {
    num_rows: Option<i64>,
    total_byte_size: Option<i64>,
    columns: Vec<Chunk>,
}

#[derive(Debug, Default)]
struct Chunk {
    external: bool,
    file_offset: Option<i64>,
    has_meta: bool,
    num_values: Option<i64>,
    uncompressed: Option<i64>,
    compressed: Option<i64>,
    data_page_offset: Option<i64>,
    index_page_offset: Option<i64>,
    dictionary_page_offset: Option<i64>,
    indexes: Vec<(i64, i64)>,
}

const T_TRUE: u8 = 1;
const T_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;

struct R<'a> {
    b: &'a [u8],
    pos: usize,
}

type Res<T> = Result<T, String>;

impl R<'_> {
    fn byte(&mut self) -> Res<u8> {
        let v = *self
            .b
            .get(self.pos)
            .ok_or("the footer ends inside a value")?;
        self.pos += 1;
        Ok(v)
    }

    fn skip_bytes(&mut self, n: u64) -> Res<()> {
        let left = (self.b.len() - self.pos) as u64;
        if n > left {
            return Err(format!(
                "the footer declares a {n}-byte value with {left} bytes left"
            ));
        }
        self.pos += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> Res<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err("a varint in the footer overflows 64 bits".into());
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint in the footer is longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> Res<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A list or set header: (element count, element type). The count is bounded by the
    /// bytes left (every element takes at least one byte).
    fn list(&mut self) -> Res<(u64, u8)> {
        let h = self.byte()?;
        let ty = h & 0x0f;
        let n = match h >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        let left = (self.b.len() - self.pos) as u64;
        if n > left {
            return Err(format!(
                "the footer declares a list of {n} elements in {left} bytes"
            ));
        }
        Ok((n, ty))
    }

    fn skip(&mut self, ty: u8, depth: usize) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(format!("the footer nests deeper than {MAX_DEPTH} levels"));
        }
        match ty {
            T_TRUE | T_FALSE => Ok(()),
            T_BYTE => self.byte().map(|_| ()),
            T_I16 | T_I32 | T_I64 => self.varint().map(|_| ()),
            T_DOUBLE => self.skip_bytes(8),
            T_BINARY => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            T_LIST | T_SET => {
                let (n, et) = self.list()?;
                for _ in 0..n {
                    if et == T_TRUE || et == T_FALSE {
                        self.byte()?;
                    } else {
                        self.skip(et, depth + 1)?;
                    }
                }
                Ok(())
            }
            T_MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                if n > (self.b.len() - self.pos) as u64 {
                    return Err(format!("the footer declares a map of {n} entries"));
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip(kv >> 4, depth + 1)?;
                    self.skip(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            T_STRUCT => self.fields(depth + 1, |r, _, ty, d| r.skip(ty, d)),
            other => Err(format!("unknown Thrift type {other} in the footer")),
        }
    }

    /// Walk a struct's fields, handing each (id, type) to `f`, which must consume the value.
    fn fields(
        &mut self,
        depth: usize,
        mut f: impl FnMut(&mut Self, i16, u8, usize) -> Res<()>,
    ) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(format!("the footer nests deeper than {MAX_DEPTH} levels"));
        }
        let mut last: i16 = 0;
        loop {
            let h = self.byte()?;
            if h == 0 {
                return Ok(());
            }
            let ty = h & 0x0f;
            let delta = h >> 4;
            let id = if delta == 0 {
                i16::try_from(self.zigzag()?).map_err(|_| "a field id out of range")?
            } else {
                last.wrapping_add(i16::from(delta))
            };
            last = id;
            f(self, id, ty, depth)?;
        }
    }

    fn int(&mut self, ty: u8) -> Res<i64> {
        match ty {
            T_BYTE => Ok(i64::from(self.byte()? as i8)),
            T_I16 | T_I32 | T_I64 => self.zigzag(),
            other => Err(format!(
                "the footer has type {other} where an integer belongs"
            )),
        }
    }

    fn each<T>(
        &mut self,
        ty: u8,
        depth: usize,
        mut f: impl FnMut(&mut Self, usize) -> Res<T>,
    ) -> Res<Vec<T>> {
        if ty != T_LIST && ty != T_SET {
            return Err("the footer has another type where a list belongs".into());
        }
        let (n, et) = self.list()?;
        if et != T_STRUCT {
            return Err("the footer's list does not hold structs".into());
        }
        // `n` is bounded by the bytes left, so this allocation is too.
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            out.push(f(self, depth + 1)?);
        }
        Ok(out)
    }
}

fn walk(b: &[u8]) -> Res<Meta> {
    let mut r = R { b, pos: 0 };
    let mut m = Meta::default();
    r.fields(0, |r, id, ty, d| {
        match (id, ty) {
            (2, T_LIST) => {
                let spans = &mut m.spans;
                m.schema_children = r.each(ty, d, |r, d| {
                    let mut children = None;
                    r.fields(d, |r, id, ty, d| match (id, ty) {
                        (5, T_I32) => {
                            let at = r.pos;
                            children = Some(r.int(ty)?);
                            spans.push(("num_children", at..r.pos));
                            Ok(())
                        }
                        _ => r.skip(ty, d),
                    })?;
                    Ok(children)
                })?
            }
            (3, T_I64) => m.num_rows = Some(r.int(ty)?),
            (4, T_LIST) => {
                m.row_groups = r.each(ty, d, |r, d| {
                    let mut g = RowGroup::default();
                    r.fields(d, |r, id, ty, d| {
                        match (id, ty) {
                            (1, T_LIST) => {
                                g.columns = r.each(ty, d, |r, d| chunk(r, d, &mut m.spans))?
                            }
                            (2, T_I64) => g.total_byte_size = Some(r.int(ty)?),
                            (3, T_I64) => g.num_rows = Some(r.int(ty)?),
                            _ => r.skip(ty, d)?,
                        }
                        Ok(())
                    })?;
                    Ok(g)
                })?
            }
            _ => r.skip(ty, d)?,
        }
        Ok(())
    })?;
    Ok(m)
}

fn chunk(
    r: &mut R<'_>,
    d: usize,
    spans: &mut Vec<(&'static str, std::ops::Range<usize>)>,
) -> Res<Chunk> {
    let mut c = Chunk::default();
    let mut index = [None::<i64>; 4];
    r.fields(d, |r, id, ty, d| {
        match (id, ty) {
            (1, T_BINARY) => {
                c.external = true;
                r.skip(ty, d)?
            }
            (2, T_I64) => c.file_offset = Some(r.int(ty)?),
            (3, T_STRUCT) => {
                c.has_meta = true;
                r.fields(d + 1, |r, id, ty, d| {
                    match (id, ty) {
                        (5, T_I64) => c.num_values = Some(r.int(ty)?),
                        (6, T_I64) => c.uncompressed = Some(r.int(ty)?),
                        (7, T_I64) => c.compressed = Some(r.int(ty)?),
                        (9, T_I64) => {
                            let at = r.pos;
                            c.data_page_offset = Some(r.int(ty)?);
                            spans.push(("data_page_offset", at..r.pos));
                        }
                        (12, T_STRUCT) => r.fields(d + 1, |r, id, ty, d| {
                            if (id, ty) == (3, T_I64) {
                                let at = r.pos;
                                r.int(ty)?;
                                spans.push(("null_count", at..r.pos));
                                Ok(())
                            } else {
                                r.skip(ty, d)
                            }
                        })?,
                        (10, T_I64) => c.index_page_offset = Some(r.int(ty)?),
                        (11, T_I64) => {
                            let at = r.pos;
                            c.dictionary_page_offset = Some(r.int(ty)?);
                            spans.push(("dictionary_page_offset", at..r.pos));
                        }
                        _ => r.skip(ty, d)?,
                    }
                    Ok(())
                })?
            }
            (4..=7, T_I64 | T_I32) => index[(id - 4) as usize] = Some(r.int(ty)?),
            _ => r.skip(ty, d)?,
        }
        Ok(())
    })?;
    // (offset_index_offset, _length), (column_index_offset, _length).
    for (o, l) in [(index[0], index[1]), (index[2], index[3])] {
        if let (Some(o), Some(l)) = (o, l) {
            c.indexes.push((o, l));
        }
    }
    Ok(c)
}

/// Check the schema tree: every element's child count is non-negative, the counts describe
/// exactly the elements there are, and no branch is deeper than [`MAX_DEPTH`]. Returns the
/// number of leaf columns.
fn schema(children: &[Option<i64>]) -> Res<usize> {
    if children.is_empty() {
        return Err("the footer's schema is empty".into());
    }
    let mut leaves = 0usize;
    // A stack of the children still to read at each open level.
    let mut open: Vec<i64> = Vec::new();
    for (i, c) in children.iter().enumerate() {
        if i > 0 {
            match open.last_mut() {
                Some(n) => *n -= 1,
                None => {
                    return Err(format!(
                        "the footer's schema has {} elements but its root declares fewer",
                        children.len()
                    ))
                }
            }
        }
        let n = c.unwrap_or(0);
        if n < 0 {
            return Err(format!("schema element {i} declares {n} children"));
        }
        let left = (children.len() - i - 1) as i64;
        if n > left {
            return Err(format!(
                "schema element {i} declares {n} children but only {left} elements follow"
            ));
        }
        if n > 0 || i == 0 {
            open.push(n);
            if open.len() > MAX_DEPTH {
                return Err(format!("the schema nests deeper than {MAX_DEPTH} levels"));
            }
        } else {
            leaves += 1;
        }
        while open.last() == Some(&0) {
            open.pop();
        }
    }
    if !open.is_empty() {
        return Err("the footer's schema declares more children than it has elements".into());
    }
    Ok(leaves)
}

/// Check a footer (the Thrift `FileMetaData` bytes) against the file it ends, whose data
/// (before the footer) is `data_end` bytes long.
pub fn check(footer: &[u8], data_end: u64) -> Result<(), String> {
    let m = walk(footer)?;
    let leaves = schema(&m.schema_children)?;
    let nonneg = |what: &str, v: Option<i64>| -> Res<i64> {
        match v {
            Some(v) if v < 0 => Err(format!("the footer declares a negative {what} ({v})")),
            Some(v) => Ok(v),
            None => Ok(0),
        }
    };
    nonneg("row count", m.num_rows)?;
    let end = data_end as i64;
    for (g, rg) in m.row_groups.iter().enumerate() {
        let at = |what: &str| format!("{what} of row group {g}");
        nonneg(&at("row count"), rg.num_rows)?;
        nonneg(&at("byte size"), rg.total_byte_size)?;
        if rg.columns.len() != leaves {
            return Err(format!(
                "row group {g} has {} column chunks, the schema {leaves} columns",
                rg.columns.len()
            ));
        }
        for (k, c) in rg.columns.iter().enumerate() {
            let at = |what: &str| format!("{what} of column {k} in row group {g}");
            if c.external {
                return Err(format!("column {k} of row group {g} lives in another file"));
            }
            if !c.has_meta {
                return Err(format!("column {k} of row group {g} has no metadata"));
            }
            nonneg(&at("file offset"), c.file_offset)?;
            nonneg(&at("value count"), c.num_values)?;
            let size = nonneg(&at("compressed size"), c.compressed)?;
            let raw = nonneg(&at("uncompressed size"), c.uncompressed)?;
            if raw > MAX_CHUNK_UNCOMPRESSED {
                return Err(format!(
                    "{} is {raw} bytes, over this build's limit of {MAX_CHUNK_UNCOMPRESSED}",
                    at("the uncompressed size")
                ));
            }
            let data = nonneg(&at("data page offset"), c.data_page_offset)?;
            nonneg(&at("index page offset"), c.index_page_offset)?;
            let dict = nonneg(&at("dictionary page offset"), c.dictionary_page_offset)?;
            let start = if dict > 0 && dict < data { dict } else { data };
            if start.checked_add(size).is_none_or(|e| e > end) {
                return Err(format!(
                    "{} ({start} + {size} bytes) lies outside the file's {end} data bytes",
                    at("the byte range")
                ));
            }
            for &(o, l) in &c.indexes {
                if o < 0 || l < 0 || o.checked_add(l).is_none_or(|e| e > end) {
                    return Err(format!(
                        "{} ({o} + {l} bytes) lies outside the file",
                        at("a page index")
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Where the values named `what` lie in a footer (for tests that damage them).
#[cfg(test)]
pub(crate) fn spans(footer: &[u8], what: &str) -> Vec<std::ops::Range<usize>> {
    walk(footer)
        .expect("a sound footer")
        .spans
        .into_iter()
        .filter(|(w, _)| *w == what)
        .map(|(_, r)| r)
        .collect()
}

/// A Thrift compact-protocol writer for the tests: enough to build footers by hand.
#[cfg(test)]
pub(crate) mod write {
    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    pub fn zigzag(out: &mut Vec<u8>, v: i64) {
        varint(out, ((v << 1) ^ (v >> 63)) as u64);
    }

    /// A field header with an explicit id (delta 0), then the caller writes the value.
    pub fn field(out: &mut Vec<u8>, id: i16, ty: u8) {
        out.push(ty);
        zigzag(out, i64::from(id));
    }
}

#[cfg(test)]
mod tests {
    use super::write::*;
    use super::*;

    /// A footer: a schema of `root` + `leaves` leaf columns, one row group whose column
    /// chunks start at `offset` with `size` bytes.
    fn footer(root_children: i64, leaves: usize, offset: i64, size: i64) -> Vec<u8> {
        let mut b = Vec::new();
        field(&mut b, 1, T_I32);
        zigzag(&mut b, 1);
        field(&mut b, 2, T_LIST);
        b.push(0xf0 | T_STRUCT);
        varint(&mut b, (leaves + 1) as u64);
        // root
        field(&mut b, 4, T_BINARY);
        varint(&mut b, 6);
        b.extend(b"schema");
        field(&mut b, 5, T_I32);
        zigzag(&mut b, root_children);
        b.push(0);
        for _ in 0..leaves {
            field(&mut b, 1, T_I32);
            zigzag(&mut b, 1);
            b.push(0);
        }
        field(&mut b, 3, T_I64);
        zigzag(&mut b, 10);
        field(&mut b, 4, T_LIST);
        b.push(0x10 | T_STRUCT);
        // row group
        field(&mut b, 1, T_LIST);
        b.push(0xf0 | T_STRUCT);
        varint(&mut b, leaves as u64);
        for _ in 0..leaves {
            field(&mut b, 2, T_I64);
            zigzag(&mut b, offset);
            field(&mut b, 3, T_STRUCT);
            for (id, v) in [(5, 10), (6, size), (7, size), (9, offset)] {
                field(&mut b, id, T_I64);
                zigzag(&mut b, v);
            }
            b.push(0);
            b.push(0);
        }
        field(&mut b, 3, T_I64);
        zigzag(&mut b, 10);
        b.push(0);
        b.push(0);
        b
    }

    #[test]
    fn a_sound_footer_passes() {
        check(&footer(2, 2, 4, 100), 1000).unwrap();
    }

    #[test]
    fn negative_offsets_and_sizes_are_damage() {
        let e = check(&footer(1, 1, -5, 100), 1000).unwrap_err();
        assert!(e.contains("negative file offset"), "{e}");
        let e = check(&footer(1, 1, 4, -1), 1000).unwrap_err();
        assert!(e.contains("negative compressed size"), "{e}");
        let e = check(&footer(1, 1, 4, 5000), 1000).unwrap_err();
        assert!(e.contains("outside the file"), "{e}");
    }

    #[test]
    fn absurd_child_counts_are_damage_not_an_allocation() {
        let e = check(&footer(i64::from(i32::MAX), 1, 4, 10), 1000).unwrap_err();
        assert!(e.contains("declares 2147483647 children"), "{e}");
        let e = check(&footer(-3, 1, 4, 10), 1000).unwrap_err();
        assert!(e.contains("-3 children"), "{e}");
        let mut f = footer(1, 1, 4, 10);
        // A list header declaring 2^40 schema elements.
        let at = f.iter().position(|&b| b == 0xf0 | T_STRUCT).unwrap();
        let mut huge = vec![0xf0 | T_STRUCT];
        varint(&mut huge, 1 << 40);
        f.splice(at..at + 2, huge);
        let e = check(&f, 1000).unwrap_err();
        assert!(e.contains("list of 1099511627776 elements"), "{e}");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let f = footer(2, 2, 4, 100);
        for cut in 0..f.len() {
            assert!(check(&f[..cut], 1000).is_err(), "cut at {cut}");
        }
    }
}
