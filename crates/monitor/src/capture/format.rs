//! The layouts tracefs describes: an event's `format` file (its id and field offsets) and
//! `events/header_page` (the ring-buffer page header). Pure text parsing.

use std::collections::HashMap;

/// Where a field is in an event's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

/// An event's `format` file: its id and its fields by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub id: u16,
    pub fields: HashMap<String, Field>,
}

impl EventFormat {
    /// The field `name`, or what is missing.
    pub fn field(&self, name: &str) -> Result<Field, String> {
        self.fields.get(name).copied().ok_or_else(|| format!("the event has no field {name:?}"))
    }
}

/// Parses one `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` line into (name, field).
fn field_line(line: &str) -> Option<(String, Field)> {
    let rest = line.trim().strip_prefix("field:")?;
    let mut parts = rest.split(';').map(str::trim);
    let decl = parts.next()?;
    let mut offset = None;
    let mut size = None;
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse().ok();
        }
    }
    // The name is the declaration's last word, less an array suffix: `char rwbs[10]`.
    let word = decl.split_whitespace().last()?;
    let name = word.split('[').next()?.to_string();
    Some((name, Field { offset: offset?, size: size? }))
}

/// Parses an event's `format` file.
pub fn parse_event(text: &str) -> Result<EventFormat, String> {
    let mut id = None;
    let mut fields = HashMap::new();
    for line in text.lines() {
        if let Some(v) = line.trim().strip_prefix("ID:") {
            id = v.trim().parse::<u16>().ok();
        } else if let Some((name, f)) = field_line(line) {
            fields.insert(name, f);
        }
    }
    let id = id.ok_or("no ID line")?;
    Ok(EventFormat { id, fields })
}

/// The ring-buffer page header (`events/header_page`): a timestamp, the commit word (bytes
/// of data, with the missed-events flags in its top bits) and the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub timestamp: Field,
    pub commit: Field,
    pub data: usize,
}

impl PageLayout {
    /// The layout of every 64-bit kernel (8-byte timestamp, 8-byte commit, data at 16).
    pub const DEFAULT: PageLayout =
        PageLayout { timestamp: Field { offset: 0, size: 8 }, commit: Field { offset: 8, size: 8 }, data: 16 };
}

/// Parses `events/header_page`.
pub fn parse_header_page(text: &str) -> Result<PageLayout, String> {
    let mut map = HashMap::new();
    for line in text.lines() {
        if let Some((name, f)) = field_line(line) {
            // `overwrite` shares the commit word's offset: keep the first of a name only.
            map.entry(name).or_insert(f);
        }
    }
    let get = |n: &str| map.get(n).copied().ok_or_else(|| format!("header_page has no field {n:?}"));
    let layout = PageLayout { timestamp: get("timestamp")?, commit: get("commit")?, data: get("data")?.offset };
    if layout.timestamp.size != 8 || !matches!(layout.commit.size, 4 | 8) {
        return Err(format!(
            "unexpected header_page layout (timestamp of {} bytes, commit of {})",
            layout.timestamp.size, layout.commit.size
        ));
    }
    Ok(layout)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]\", ((unsigned int) ((REC->dev) >> 20))
";

    const HEADER: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;
";

    #[test]
    fn event_fields_and_id() {
        let f = parse_event(ISSUE).unwrap();
        assert_eq!(f.id, 2104);
        assert_eq!(f.field("dev").unwrap(), Field { offset: 8, size: 4 });
        assert_eq!(f.field("sector").unwrap(), Field { offset: 16, size: 8 });
        assert_eq!(f.field("rwbs").unwrap(), Field { offset: 34, size: 10 });
        assert_eq!(f.field("cmd").unwrap(), Field { offset: 60, size: 4 });
        assert!(f.field("error").is_err());
    }

    #[test]
    fn header_page_layout() {
        assert_eq!(parse_header_page(HEADER).unwrap(), PageLayout::DEFAULT);
        assert!(parse_header_page("").is_err());
        assert!(parse_event("format:\n").is_err());
    }
}
