//! Reading a TOML table by hand, so that every error names the setting by its full path
//! (`card.skills[1].id`) and says what is allowed.

use std::collections::HashMap;
use std::time::Duration;

use toml::{Table, Value};

use crate::duration::parse_duration;
use crate::error::Errors;

/// One table of the file at a known path. A section that is absent (or was not a table)
/// has no table, and every field in it reads as absent, so defaults flow through the
/// same code as written values.
pub(crate) struct Section<'a> {
    path: String,
    table: Option<&'a Table>,
}

/// One value of the file, possibly absent, with the full path that names it.
pub(crate) struct Field<'a> {
    path: String,
    value: Option<&'a Value>,
}

impl<'a> Section<'a> {
    pub(crate) fn root(table: &'a Table) -> Section<'a> {
        Section {
            path: String::new(),
            table: Some(table),
        }
    }

    pub(crate) fn field(&self, key: &str) -> Field<'a> {
        Field {
            path: self.path_of(key),
            value: self.table.and_then(|table| table.get(key)),
        }
    }

    /// Refuses every key not in `allowed`, listing the allowed ones.
    pub(crate) fn refuse_unknown(&self, allowed: &[&str], errors: &mut Errors) {
        self.refuse_unknown_explained(allowed, |_| None, errors);
    }

    /// Like [`Section::refuse_unknown`], but `explain` may give a better message for a key
    /// that people are likely to put here by mistake.
    pub(crate) fn refuse_unknown_explained(
        &self,
        allowed: &[&str],
        explain: impl Fn(&str) -> Option<String>,
        errors: &mut Errors,
    ) {
        let Some(table) = self.table else { return };
        for key in table.keys().filter(|key| !allowed.contains(&key.as_str())) {
            let message = explain(key)
                .unwrap_or_else(|| format!("unknown setting (allowed: {})", allowed.join(", ")));
            errors.push(self.path_of(key), message);
        }
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Whether the section is a table in the file (not absent, nor a value of another type).
    pub(crate) fn is_table(&self) -> bool {
        self.table.is_some()
    }

    /// Every key of the table with its field, in the file's key order.
    pub(crate) fn entries(&self) -> Vec<(&'a str, Field<'a>)> {
        let Some(table) = self.table else {
            return Vec::new();
        };
        table
            .keys()
            .map(|key| (key.as_str(), self.field(key)))
            .collect()
    }

    fn path_of(&self, key: &str) -> String {
        let is_bare = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        let key = if is_bare {
            key.to_owned()
        } else {
            format!("{key:?}")
        };
        if self.path.is_empty() {
            key
        } else {
            format!("{}.{key}", self.path)
        }
    }
}

impl<'a> Field<'a> {
    /// A value that comes from elsewhere than the file (an environment variable), named `path`
    /// in errors.
    pub(crate) fn detached(path: String, value: &'a Value) -> Field<'a> {
        Field {
            path,
            value: Some(value),
        }
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn is_set(&self) -> bool {
        self.value.is_some()
    }

    pub(crate) fn fail(&self, errors: &mut Errors, message: impl Into<String>) {
        errors.push(self.path.clone(), message);
    }

    /// Reports a value of the wrong type: "must be `expected` (got an integer)".
    fn wrong_type(&self, expected: &str, found: &Value, errors: &mut Errors) {
        self.fail(
            errors,
            format!("must be {expected} (got {})", type_name(found)),
        );
    }

    /// Reports an absent value: "required (`expected`)".
    pub(crate) fn require(&self, expected: &str, errors: &mut Errors) -> bool {
        if self.value.is_none() {
            self.fail(errors, format!("required ({expected})"));
        }
        self.value.is_some()
    }

    /// The table at this field; an empty section when absent or not a table.
    pub(crate) fn section(&self, expected: &str, errors: &mut Errors) -> Section<'a> {
        let table = match self.value {
            Some(Value::Table(table)) => Some(table),
            Some(other) => {
                self.wrong_type(expected, other, errors);
                None
            }
            None => None,
        };
        Section {
            path: self.path.clone(),
            table,
        }
    }

    /// The items of the array at this field, each named `path[i]`; none when absent or
    /// not an array.
    pub(crate) fn items(&self, expected: &str, errors: &mut Errors) -> Vec<Field<'a>> {
        match self.value {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(index, item)| Field {
                    path: format!("{}[{index}]", self.path),
                    value: Some(item),
                })
                .collect(),
            Some(other) => {
                self.wrong_type(expected, other, errors);
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// The tables in the array at this field; other items are reported and skipped.
    pub(crate) fn tables(
        &self,
        expected: &str,
        expected_item: &str,
        errors: &mut Errors,
    ) -> Vec<Section<'a>> {
        let mut tables = Vec::new();
        for item in self.items(expected, errors) {
            match item.value {
                Some(Value::Table(table)) => tables.push(Section {
                    path: item.path,
                    table: Some(table),
                }),
                Some(other) => item.wrong_type(expected_item, other, errors),
                None => {}
            }
        }
        tables
    }

    pub(crate) fn string(&self, expected: &str, errors: &mut Errors) -> Option<&'a str> {
        match self.value {
            Some(Value::String(text)) => Some(text),
            Some(other) => {
                self.wrong_type(expected, other, errors);
                None
            }
            None => None,
        }
    }

    /// A string that must be present and not blank.
    pub(crate) fn required_text(&self, expected: &str, errors: &mut Errors) -> Option<&'a str> {
        if !self.require(expected, errors) {
            return None;
        }
        let text = self.string(expected, errors)?;
        if text.trim().is_empty() {
            self.fail(errors, "must not be blank");
            return None;
        }
        Some(text)
    }

    /// A string that may be left out, but not left blank.
    pub(crate) fn optional_text(&self, expected: &str, errors: &mut Errors) -> Option<&'a str> {
        let text = self.string(expected, errors)?;
        if text.trim().is_empty() {
            self.fail(
                errors,
                "must not be blank; leave it out to keep the default",
            );
            return None;
        }
        Some(text)
    }

    /// A list of strings; items of another type are reported and skipped.
    pub(crate) fn strings(&self, expected: &str, errors: &mut Errors) -> Vec<String> {
        self.items(expected, errors)
            .iter()
            .filter_map(|item| item.string("a string", errors))
            .map(str::to_owned)
            .collect()
    }

    pub(crate) fn boolean(&self, errors: &mut Errors) -> Option<bool> {
        match self.value {
            Some(Value::Boolean(flag)) => Some(*flag),
            Some(other) => {
                self.wrong_type("true or false", other, errors);
                None
            }
            None => None,
        }
    }

    /// A number, whole or not.
    pub(crate) fn number(&self, expected: &str, errors: &mut Errors) -> Option<f64> {
        match self.value {
            Some(Value::Integer(number)) => Some(*number as f64),
            Some(Value::Float(number)) => Some(*number),
            Some(other) => {
                self.wrong_type(expected, other, errors);
                None
            }
            None => None,
        }
    }

    pub(crate) fn integer(&self, expected: &str, errors: &mut Errors) -> Option<i64> {
        match self.value {
            Some(Value::Integer(number)) => Some(*number),
            Some(other) => {
                self.wrong_type(expected, other, errors);
                None
            }
            None => None,
        }
    }

    /// A whole number from `least` to `most` (at least 0), as a count; `expected` describes it
    /// with an example. Out of range, the error names the bounds followed by `unit` (`" bytes"`,
    /// or `""` for a plain number).
    pub(crate) fn count_between(
        &self,
        expected: &str,
        (least, most): (i64, i64),
        unit: &str,
        errors: &mut Errors,
    ) -> Option<usize> {
        let value = self.integer(expected, errors)?;
        if !(least..=most).contains(&value) {
            self.fail(
                errors,
                format!("must be between {least} and {most}{unit} (got {value})"),
            );
            return None;
        }
        Some(value as usize)
    }

    /// One of a fixed set of words, e.g. `updates = "follow"`.
    pub(crate) fn choice<T: Copy>(&self, choices: &[(&str, T)], errors: &mut Errors) -> Option<T> {
        let words: Vec<String> = choices
            .iter()
            .map(|(word, _)| format!("{word:?}"))
            .collect();
        let (last, rest) = words.split_last().expect("a choice offers several words");
        let expected = format!("{} or {last}", rest.join(", "));
        let word = self.string(&expected, errors)?;
        let found = choices.iter().find(|(candidate, _)| *candidate == word);
        if found.is_none() {
            self.fail(errors, format!("must be {expected} (got {word:?})"));
        }
        found.map(|(_, choice)| *choice)
    }

    /// A duration such as `"5s"`. Every duration setting is at least a second long, so
    /// that nothing polls in a tight loop.
    pub(crate) fn duration_at_least_one_second(&self, errors: &mut Errors) -> Option<Duration> {
        self.duration_up_to(None, errors)
    }

    /// A duration of at least 1 second and, when `most` is given as (bound, its words), at most
    /// that bound.
    pub(crate) fn duration_up_to(
        &self,
        most: Option<(Duration, &str)>,
        errors: &mut Errors,
    ) -> Option<Duration> {
        let text = self.string("a duration like \"5s\"", errors)?;
        match parse_duration(text) {
            Ok(duration) if duration < Duration::from_secs(1) => {
                self.fail(errors, format!("must be at least 1 second (got {text:?})"));
                None
            }
            Ok(duration) if most.is_some_and(|(bound, _)| duration > bound) => {
                let words = most.map_or("", |(_, words)| words);
                self.fail(errors, format!("must be at most {words} (got {text:?})"));
                None
            }
            Ok(duration) => Some(duration),
            Err(message) => {
                self.fail(errors, message);
                None
            }
        }
    }
}

/// Remembers where each id was first seen, to refuse duplicates.
#[derive(Default)]
pub(crate) struct UniqueIds {
    first_seen: HashMap<String, String>,
}

impl UniqueIds {
    /// Records `id`, first seen at `place`; reports it at `field` if it was seen before.
    pub(crate) fn check(&mut self, id: &str, place: &str, field: &Field<'_>, errors: &mut Errors) {
        match self.first_seen.get(id) {
            Some(first_place) => {
                field.fail(errors, format!("duplicate id {id:?} (also {first_place})"));
            }
            None => {
                self.first_seen.insert(id.to_owned(), place.to_owned());
            }
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date-time",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}
