//! The file's lines as comparison keys per tolerance level, indexed by key, so that a
//! chunk is looked up by its rarest line instead of compared at every line.

use std::collections::HashMap;
use std::hash::Hash;
use std::hash::Hasher;

use super::super::normalize::Level;
use super::Text;

/// Per-level comparison keys of the file's lines, computed on first use, with where
/// each key occurs: a chunk is then looked up by its rarest line instead of being
/// compared at every line below the cursor (which made placing N chunks cost N times
/// the file: 100,000 chunks took minutes).
pub(super) struct Keys<'a> {
    text: &'a Text,
    cache: Vec<LevelKeys>,
}

struct LevelKeys {
    level: Level,
    keys: Vec<String>,
    /// Key hash → the lines with that key, ascending (collisions are checked).
    at: HashMap<u64, Vec<usize>>,
}

fn key_hash(key: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

impl<'a> Keys<'a> {
    pub(super) fn new(text: &'a Text) -> Keys<'a> {
        Keys {
            text,
            cache: Vec::new(),
        }
    }
    fn level(&mut self, level: Level) -> &LevelKeys {
        let pos = match self.cache.iter().position(|l| l.level == level) {
            Some(p) => p,
            None => {
                let keys: Vec<String> = self.text.lines.iter().map(|(t, _)| level.key(t)).collect();
                let mut at: HashMap<u64, Vec<usize>> = HashMap::new();
                for (i, k) in keys.iter().enumerate() {
                    at.entry(key_hash(k)).or_default().push(i);
                }
                self.cache.push(LevelKeys { level, keys, at });
                self.cache.len() - 1
            }
        };
        &self.cache[pos]
    }
    pub(super) fn get(&mut self, level: Level) -> &[String] {
        &self.level(level).keys
    }
    /// The lines at or after `from` whose key is `key`, ascending.
    pub(super) fn lines_with(&mut self, level: Level, key: &str, from: usize) -> Vec<usize> {
        let l = self.level(level);
        let Some(lines) = l.at.get(&key_hash(key)) else {
            return Vec::new();
        };
        let first = lines.partition_point(|&i| i < from);
        lines[first..]
            .iter()
            .copied()
            .filter(|&i| l.keys[i] == key)
            .collect()
    }
    /// [`find_all`] over this level's keys, from the occurrences of `pat`'s rarest line.
    pub(super) fn find_all(&mut self, level: Level, pat: &[String], from: usize) -> Vec<usize> {
        let l = self.level(level);
        if pat.is_empty() || pat.len() > l.keys.len() {
            return Vec::new();
        }
        let mut pivot: Option<(usize, &Vec<usize>)> = None;
        for (j, k) in pat.iter().enumerate() {
            let Some(lines) = l.at.get(&key_hash(k)) else {
                return Vec::new();
            };
            if pivot.is_none_or(|(_, p)| lines.len() < p.len()) {
                pivot = Some((j, lines));
            }
        }
        let Some((j, lines)) = pivot else {
            return Vec::new();
        };
        let last = l.keys.len() - pat.len();
        let first = lines.partition_point(|&i| i < from + j);
        lines[first..]
            .iter()
            .map(|&i| i - j)
            .take_while(|&start| start <= last)
            .filter(|&start| l.keys[start..start + pat.len()] == *pat)
            .collect()
    }
}

/// Every start in `[from, len - pat.len()]` where `pat` matches `hay`.
pub(super) fn find_all(hay: &[String], pat: &[String], from: usize) -> Vec<usize> {
    if pat.is_empty() || pat.len() > hay.len() {
        return Vec::new();
    }
    (from..=hay.len() - pat.len())
        .filter(|&i| hay[i..i + pat.len()] == *pat)
        .collect()
}

pub(super) fn keys_of(level: Level, lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| level.key(l)).collect()
}
