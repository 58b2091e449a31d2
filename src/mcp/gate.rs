//! The gate in front of the protocol: every line the client sends is read here first, bounded in
//! size, and a request the protocol library would drop or answer without its id is answered here,
//! with its id: a request whose `params` is not an object (`-32602`), a request of no known shape
//! (`-32600`), a line larger than [`MAX_REQUEST`] (`-32600`, id `null`: its id was never read).
//! What passes goes on to the library unchanged. One task writes stdout: the library's lines and
//! the gate's answers, each whole.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest request line the server reads, in bytes. A tool's arguments are a query, paths and
/// a few words; a larger line is answered with an error and never buffered.
pub(crate) const MAX_REQUEST: usize = 4 << 20;

/// What the gate decides about one whole line.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// The protocol library reads it.
    Pass,
    /// The gate answers it with this JSON-RPC error message.
    Answer(Value),
}

/// A JSON-RPC error response.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The answer to a line longer than [`MAX_REQUEST`].
pub(crate) fn too_large() -> Value {
    error(Value::Null, -32600, &format!("the request is larger than {} MiB; send a smaller one", MAX_REQUEST >> 20))
}

/// Judges one line (without its newline). Only a request (a `method` and an `id`) is ever
/// answered here: a notification gets no answer by the protocol's rule, and a line that is not
/// JSON is left to the library, which ignores it.
pub(crate) fn judge(line: &[u8]) -> Verdict {
    let Ok(value) = serde_json::from_slice::<Value>(line) else { return Verdict::Pass };
    let Some(object) = value.as_object() else { return Verdict::Pass };
    let (Some(id), Some(method)) = (object.get("id"), object.get("method")) else { return Verdict::Pass };
    if !(id.is_string() || id.is_number()) {
        return Verdict::Answer(error(Value::Null, -32600, "a request's `id` is a string or a number"));
    }
    if !method.is_string() {
        return Verdict::Answer(error(id.clone(), -32600, "a request's `method` is a string"));
    }
    if let Some(params) = object.get("params").filter(|p| !p.is_object()) {
        let kind = match params {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::Object(_) => unreachable!("filtered above"),
        };
        return Verdict::Answer(error(id.clone(), -32602, &format!("`params` is {kind}; MCP requests take an object")));
    }
    // the line itself, as the library reads it (a key given twice is an error there, not in a
    // `Value`)
    match serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(line) {
        Ok(_) => Verdict::Pass,
        Err(e) => Verdict::Answer(error(id.clone(), -32600, &format!("not a request this server knows: {e}"))),
    }
}

/// Reads the client's lines from `input`, answers through `answers` what the gate answers, and
/// writes the rest to `to_library`, until the client closes its end.
pub(crate) async fn read<R, W>(input: R, mut to_library: W, answers: mpsc::UnboundedSender<Value>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_bounded(&mut input, &mut line).await {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLarge) => {
                let _ = answers.send(too_large());
            }
            Ok(Line::Whole) => match judge(line.strip_suffix(b"\n").unwrap_or(&line)) {
                Verdict::Pass => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if to_library.write_all(&line).await.is_err() || to_library.flush().await.is_err() {
                        break;
                    }
                }
                Verdict::Answer(a) => {
                    let _ = answers.send(a);
                }
            },
        }
    }
    let _ = to_library.shutdown().await;
}

/// One read line.
enum Line {
    Whole,
    TooLarge,
    End,
}

/// Reads one line into `line`, never holding more than [`MAX_REQUEST`] bytes of it: the rest of a
/// longer line is read and dropped.
async fn read_bounded<R: AsyncRead + Unpin>(input: &mut BufReader<R>, line: &mut Vec<u8>) -> std::io::Result<Line> {
    let mut over = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if over {
                Line::TooLarge
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Whole
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        // the line's own bytes, its newline not counted
        if !over && line.len() + newline.unwrap_or(available.len()) > MAX_REQUEST {
            over = true;
            line.clear();
        }
        if !over {
            line.extend_from_slice(&available[..take]);
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if over { Line::TooLarge } else { Line::Whole });
        }
    }
}

/// Writes to `output` every line the library writes to `from_library` and every answer of the
/// gate, each whole, until both are done.
pub(crate) async fn write<R, W>(from_library: R, mut output: W, mut answers: mpsc::UnboundedReceiver<Value>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from_library = BufReader::new(from_library);
    let mut line = Vec::new();
    let (mut library_open, mut answers_open) = (true, true);
    while library_open || answers_open {
        tokio::select! {
            // `read_until` keeps what it read in `line` when the other branch wins
            read = from_library.read_until(b'\n', &mut line), if library_open => {
                match read {
                    Ok(0) | Err(_) => library_open = false,
                    Ok(_) => {
                        if line.ends_with(b"\n") {
                            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                                return;
                            }
                            line.clear();
                        }
                    }
                }
            }
            answer = answers.recv(), if answers_open => match answer {
                Some(a) => {
                    let mut text = a.to_string().into_bytes();
                    text.push(b'\n');
                    if output.write_all(&text).await.is_err() || output.flush().await.is_err() {
                        return;
                    }
                }
                None => answers_open = false,
            },
        }
    }
    if !line.is_empty() {
        let _ = output.write_all(&line).await;
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Answer(a) => a,
            Verdict::Pass => panic!("passed: {line}"),
        }
    }

    #[test]
    fn a_request_whose_params_is_no_object_is_answered_with_its_id() {
        let a = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1,2]}"#);
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!(7), json!(-32602)), "{a}");
        let a = answer(r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":"x"}"#);
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!("s"), json!(-32602)), "{a}");
        let a = answer(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[],"params":{}}"#);
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!(8), json!(-32600)), "{a}");
        let a = answer(r#"{"jsonrpc":"2.0","id":9,"method":5}"#);
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!(9), json!(-32600)), "{a}");
        let a = answer(r#"{"jsonrpc":"2.0","id":[3],"method":"ping"}"#);
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (Value::Null, json!(-32600)), "{a}");
    }

    #[test]
    fn requests_of_known_shape_notifications_and_non_json_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}"#,
            // the SDK answers these itself, with their ids (`-32601`)
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"nme":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}"#,
            "not json",
        ] {
            assert_eq!(judge(line.as_bytes()), Verdict::Pass, "{line}");
        }
    }

    #[test]
    fn a_line_over_the_cap_is_dropped_and_the_next_one_read() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut input = vec![b'['; MAX_REQUEST + 10];
            input.extend_from_slice(b"\n{\"a\":1}\n");
            let mut r = BufReader::new(&input[..]);
            let mut line = Vec::new();
            assert!(matches!(read_bounded(&mut r, &mut line).await.unwrap(), Line::TooLarge));
            assert!(line.len() <= MAX_REQUEST + 1);
            line.clear();
            assert!(matches!(read_bounded(&mut r, &mut line).await.unwrap(), Line::Whole));
            assert_eq!(line, b"{\"a\":1}\n");
            // a last line with no newline is held to the same bound; one of the bound is read
            for (len, whole) in [(MAX_REQUEST + 1, false), (MAX_REQUEST, true)] {
                let input = vec![b'{'; len];
                let mut r = BufReader::new(&input[..]);
                line.clear();
                let got = read_bounded(&mut r, &mut line).await.unwrap();
                assert_eq!(matches!(got, Line::Whole), whole, "{len}");
            }
        });
    }
}
