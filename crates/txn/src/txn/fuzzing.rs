//! Entry points for the fuzz targets (`fuzz/`) and their regression tests: the readers
//! of the journal's event messages and of the applying record, which are otherwise
//! private. Not an API.

/// Reads a journal commit's message as [`super::journal`] does; re-encodes what it
/// read and reads that back (it must read). `true` when the message was an event.
pub fn journal_event(msg: &[u8]) -> bool {
    let Ok(event) = serde_json::from_slice::<super::journal::Event>(msg.trim_ascii()) else {
        return false;
    };
    let again =
        serde_json::to_vec(&event).map(|v| serde_json::from_slice::<super::journal::Event>(&v));
    assert!(
        matches!(again, Ok(Ok(_))),
        "an event read does not read back"
    );
    true
}

/// Reads an applying record (`.git/astedit-applying.json`) as recovery does, with the
/// same round trip. `true` when the bytes were a record.
pub fn applying_record(bytes: &[u8]) -> bool {
    let Ok(record) = serde_json::from_slice::<super::record::Record>(bytes) else {
        return false;
    };
    let again = serde_json::to_vec_pretty(&record)
        .map(|v| serde_json::from_slice::<super::record::Record>(&v));
    assert!(
        matches!(again, Ok(Ok(_))),
        "a record read does not read back"
    );
    true
}
