//! The raw stdio baseline: the server's pipes with blocking reads and
//! writes, one thread, no runtime. This marks the limit of the pipe and the
//! server, not a client anyone should write.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use crate::measure::{cpu_time, heap_stacks_kib};
use crate::raw_wire::{INITIALIZE, INITIALIZED, echo_request, parse_answer};
use crate::workload::{Plan, Samples, Workload, check, message};

struct Pipe {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    request: Vec<u8>,
    next_id: u64,
}

impl Pipe {
    fn spawn(server: &Path) -> Result<Self, String> {
        let mut child = Command::new(server)
            .arg("stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdin = BufWriter::with_capacity(64 << 10, child.stdin.take().ok_or("stdin")?);
        let stdout = BufReader::with_capacity(64 << 10, child.stdout.take().ok_or("stdout")?);
        let mut pipe = Pipe {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            request: Vec::new(),
            next_id: 1,
        };
        pipe.write_line(INITIALIZE)?;
        pipe.stdin.flush().map_err(|e| e.to_string())?;
        pipe.read_answer()?;
        pipe.write_line(INITIALIZED)?;
        pipe.stdin.flush().map_err(|e| e.to_string())?;
        Ok(pipe)
    }

    fn write_line(&mut self, frame: &[u8]) -> Result<(), String> {
        self.stdin.write_all(frame).map_err(|e| e.to_string())?;
        self.stdin.write_all(b"\n").map_err(|e| e.to_string())
    }

    fn send_echo(&mut self, message: &str) -> Result<(), String> {
        let mut request = std::mem::take(&mut self.request);
        request.clear();
        echo_request(&mut request, self.next_id, message);
        self.next_id += 1;
        let written = self.write_line(&request);
        self.request = request;
        written
    }

    /// Reads one answer line: (id, echoed length). Flushes first when the
    /// answer is not already buffered, so a pipelined client never waits
    /// on requests it has not sent.
    fn read_answer(&mut self) -> Result<(u64, usize), String> {
        if !self.stdout.buffer().contains(&b'\n') {
            self.stdin.flush().map_err(|e| e.to_string())?;
        }
        self.line.clear();
        let n = self
            .stdout
            .read_until(b'\n', &mut self.line)
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed its stdout".into());
        }
        parse_answer(&self.line)
    }

    fn call(&mut self, message: &str) -> Result<usize, String> {
        self.send_echo(message)?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        Ok(self.read_answer()?.1)
    }

    fn close(self) {
        let Pipe {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
    }
}

/// Runs `workload` over the raw pipe.
pub(crate) fn run(server: &Path, workload: Workload, plan: &Plan) -> Result<Samples, String> {
    if workload == Workload::Connect {
        Pipe::spawn(server)?.close();
        let mut samples = Samples::default();
        let cpu = cpu_time();
        for _ in 0..plan.connects {
            let t = Instant::now();
            let pipe = Pipe::spawn(server)?;
            let took = t.elapsed();
            samples.latencies.push(took);
            samples.elapsed += took;
            pipe.close();
        }
        samples.ops = plan.connects;
        samples.cpu = cpu_time().saturating_sub(cpu);
        return Ok(samples);
    }
    let mut pipe = Pipe::spawn(server)?;
    let small = message(100);
    for _ in 0..plan.warmup {
        check(pipe.call(&small)?, small.len())?;
    }
    let samples = match workload {
        Workload::Concurrent => pipelined(&mut pipe, &small, plan.concurrent, plan.in_flight)?,
        // No runtime here: from a task or not, the calls are the same.
        Workload::Sequential | Workload::SequentialTask => {
            sequential(&mut pipe, &small, plan.sequential)?
        }
        Workload::Large1M => sequential(&mut pipe, &message(1 << 20), plan.large_1m)?,
        Workload::Large10M => sequential(&mut pipe, &message(10 << 20), plan.large_10m)?,
        Workload::Connect => unreachable!("handled above"),
        Workload::Fleet => {
            pipe.close();
            return Err("W5 runs mcpwire and mcpwire-manager only".into());
        }
    };
    pipe.close();
    Ok(samples)
}

fn sequential(pipe: &mut Pipe, message: &str, n: usize) -> Result<Samples, String> {
    let mut latencies = Vec::with_capacity(n);
    let cpu = cpu_time();
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        let len = pipe.call(message)?;
        latencies.push(t.elapsed());
        check(len, message.len())?;
    }
    Ok(Samples {
        ops: n,
        elapsed: start.elapsed(),
        cpu: cpu_time().saturating_sub(cpu),
        latencies,
        message_len: (message.len() > 100).then_some(message.len()),
        heap_stacks_kib: heap_stacks_kib(),
    })
}

/// Keeps `in_flight` requests outstanding: one new request per answer.
fn pipelined(
    pipe: &mut Pipe,
    message: &str,
    n: usize,
    in_flight: usize,
) -> Result<Samples, String> {
    let cpu = cpu_time();
    let start = Instant::now();
    let mut sent = 0;
    while sent < n.min(in_flight) {
        pipe.send_echo(message)?;
        sent += 1;
    }
    for _ in 0..n {
        let (_, len) = pipe.read_answer()?;
        check(len, message.len())?;
        if sent < n {
            pipe.send_echo(message)?;
            sent += 1;
        }
    }
    Ok(Samples {
        ops: n,
        elapsed: start.elapsed(),
        cpu: cpu_time().saturating_sub(cpu),
        latencies: Vec::new(),
        message_len: None,
        heap_stacks_kib: heap_stacks_kib(),
    })
}
