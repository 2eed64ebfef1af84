//! The check of every edit: the new text is parsed again and must equal the old document with
//! exactly the new values appended to the one list, or nothing is written.

use serde_yaml::{Mapping, Value};

use super::{DocKind, Section};

/// Parse the edited text again and compare it with what it must be: the old document with
/// the new values appended to the one list, and nothing else changed.
pub(super) fn verify(
    new_text: &str,
    (lo, end): (usize, usize),
    kind: DocKind,
    expected: &Value,
    section: Section,
) -> std::result::Result<(), String> {
    let yaml = new_text
        .get(lo..end)
        .ok_or("the edited region is out of bounds")?;
    let parsed: Value = serde_yaml::from_str(yaml).map_err(|e| {
        format!(
            "adding to {section} would leave a document that does not parse ({e}); the file \
             was left untouched, edit it by hand"
        )
    })?;
    if &parsed != expected {
        let what = match kind {
            DocKind::Yaml => "document",
            DocKind::FrontMatter => "front matter",
        };
        return Err(format!(
            "could not add to {section} without changing something else in the {what}; the \
             file was left untouched, edit it by hand"
        ));
    }
    Ok(())
}

/// The list at `path` in `root`: empty when a key on the way is missing or null.
pub(super) fn current_list(root: &Value, path: &[&str]) -> std::result::Result<Vec<Value>, String> {
    let mut cur = root;
    for (depth, key) in path.iter().enumerate() {
        match cur {
            Value::Null => return Ok(Vec::new()),
            Value::Mapping(map) => match map.get(*key) {
                Some(v) => cur = v,
                None => return Ok(Vec::new()),
            },
            _ if depth == 0 => {
                return Err("the document is not a mapping of keys; nothing was added".into())
            }
            _ => {
                return Err(format!(
                    "`{}` is not a mapping; nothing was added",
                    path[..depth].join(".")
                ))
            }
        }
    }
    match cur {
        Value::Null => Ok(Vec::new()),
        Value::Sequence(items) => Ok(items.clone()),
        _ => Err(format!(
            "`{}` is not a list; nothing was added",
            path.join(".")
        )),
    }
}

/// `root` with the list at `path` replaced by `list`, creating mappings on the way.
pub(super) fn with_list(root: &Value, path: &[&str], list: Vec<Value>) -> Value {
    let Some((key, rest)) = path.split_first() else {
        return Value::Sequence(list);
    };
    let mut map = match root {
        Value::Mapping(map) => map.clone(),
        _ => Mapping::new(),
    };
    let child = map.get(*key).cloned().unwrap_or(Value::Null);
    map.insert(
        Value::String((*key).to_owned()),
        with_list(&child, rest, list),
    );
    Value::Mapping(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e36_edit_that_does_not_verify_is_refused() {
        let root: Value = serde_yaml::from_str("paths:\n  read: [a]\n").unwrap();
        let expected = with_list(
            &root,
            Section::PathsRead.key_path(),
            vec![Value::from("a"), Value::from("b")],
        );
        let good = "paths:\n  read: [a, b]\n";
        assert_eq!(
            verify(
                good,
                (0, good.len()),
                DocKind::Yaml,
                &expected,
                Section::PathsRead
            ),
            Ok(())
        );
        // Something else changed as well.
        let bad = "paths:\n  read: [a, b]\n  write: [c]\n";
        assert_eq!(
            verify(
                bad,
                (0, bad.len()),
                DocKind::Yaml,
                &expected,
                Section::PathsRead
            ),
            Err(
                "could not add to paths.read without changing something else in the document; \
                 the file was left untouched, edit it by hand"
                    .into()
            )
        );
        let broken = "paths:\n  read: [a, b\n";
        let m = verify(
            broken,
            (0, broken.len()),
            DocKind::Yaml,
            &expected,
            Section::PathsRead,
        )
        .unwrap_err();
        assert!(m.starts_with("adding to paths.read would leave a document that does not parse"));
    }
}
