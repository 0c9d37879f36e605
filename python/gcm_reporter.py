"""Step times of a training job, sent to the node's `gcm agent` (docs/reference/job-signals.md).

Standard library only: no hard dependency on torch or OpenTelemetry. Each rank reports its own steps; the agent
attributes them to the job, rank and GPU from the sending process's credentials, so nothing here names a job.

    from gcm_reporter import StepReporter

    reporter = StepReporter()              # the agent's unix socket, or $GCM_JOB_SIGNAL_ENDPOINT
    for batch in loader:
        with reporter.step(tokens=batch_tokens) as s:
            loss = model(batch).loss
            loss.backward()
            s.compute_done()               # forward + backward done: the rest is the gradient collective
            optimizer.step()
    reporter.close()

Batched and asynchronous: step() costs a clock read and an append to a bounded queue; a background thread sends
OTLP every `flush_interval` seconds, as protobuf (encoded here: the few fields it needs) or, with
`encoding="json"`, OTLP/JSON. Protobuf costs the agent about a quarter of what JSON does to read. With torch and CUDA, `cuda_events=True` times the compute with CUDA events
(read back once they have completed, never by synchronising the job).
"""

import http.client
import json
import os
import socket
import struct
import threading
import time
from collections import deque
from urllib.parse import urlparse

DEFAULT_SOCKET = "/run/gcm/job-signals.sock"
STEP_DURATION = "gcm.job.step.duration"
STEP_COMPUTE_DURATION = "gcm.job.step.compute_duration"
STEP_TOKENS = "gcm.job.step.tokens"


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def _endpoint():
    """unix:///path, http://127.0.0.1:PORT[/v1/metrics] or a bare socket path."""
    return os.environ.get("GCM_JOB_SIGNAL_ENDPOINT") or "unix://" + DEFAULT_SOCKET


class _Step:
    __slots__ = ("_reporter", "_tokens", "_start", "_compute", "_events")

    def __init__(self, reporter, tokens):
        self._reporter = reporter
        self._tokens = tokens
        self._compute = None
        self._events = None

    def __enter__(self):
        if self._reporter._cuda is not None:
            start = self._reporter._cuda.Event(enable_timing=True)
            start.record()
            self._events = [start, None]
        self._start = time.perf_counter()
        return self

    def compute_done(self):
        """Marks the end of the compute (forward + backward), before the gradient collective."""
        if self._events is not None:
            end = self._reporter._cuda.Event(enable_timing=True)
            end.record()
            self._events[1] = end
        else:
            self._compute = time.perf_counter() - self._start

    def __exit__(self, *exc):
        duration = time.perf_counter() - self._start
        if self._events is not None and self._events[1] is not None:
            self._reporter._pending_events.append((duration, self._events, self._tokens))
            self._reporter._resolve_events()
        else:
            self._reporter.record(duration, self._compute, self._tokens)
        return False


class StepReporter:
    """Reports each step's wall time, compute time and tokens to the local gcm agent."""

    def __init__(
        self, endpoint=None, flush_interval=5.0, max_queue=100000, timeout=2.0, cuda_events=False, encoding="protobuf"
    ):
        if encoding not in ("protobuf", "json"):
            raise ValueError(f"encoding {encoding!r}: expected 'protobuf' or 'json'")
        self._encoding = encoding
        self._endpoint = endpoint or _endpoint()
        self._flush_interval = flush_interval
        self._timeout = timeout
        self._queue = deque(maxlen=max_queue)  # bounded: a stalled agent never grows the job's memory
        self._pending_events = deque()
        self._step = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self.sent = 0
        self.failures = 0
        self.last_error = None
        self._cuda = None
        if cuda_events:
            try:
                import torch  # noqa: PLC0415 (optional)

                if torch.cuda.is_available():
                    self._cuda = torch.cuda
            except ImportError:
                pass
        self._thread = threading.Thread(target=self._run, name="gcm-reporter", daemon=True)
        self._thread.start()

    def step(self, tokens=None):
        """A context manager timing one step; call .compute_done() on it where the compute ends."""
        return _Step(self, tokens)

    def record(self, duration, compute_duration=None, tokens=None):
        """One step measured by the caller (seconds)."""
        with self._lock:
            self._step += 1
            self._queue.append((time.time_ns(), self._step, duration, compute_duration, tokens))

    def _resolve_events(self):
        while self._pending_events:
            duration, (start, end), tokens = self._pending_events[0]
            if not end.query():
                return
            self._pending_events.popleft()
            self.record(duration, start.elapsed_time(end) / 1000.0, tokens)

    def flush(self):
        """Sends what is queued now (from the caller's thread); False when the agent did not take it."""
        with self._lock:
            batch = list(self._queue)
            self._queue.clear()
        if not batch:
            return True
        if self._encoding == "json":
            body, content_type = json.dumps(_otlp_json(batch)).encode(), "application/json"
        else:
            body, content_type = _otlp_protobuf(batch), "application/x-protobuf"
        try:
            status = self._post(body, content_type)
        except OSError as e:
            status, self.last_error = 0, str(e)
        if status == 200:
            self.sent += len(batch)
            return True
        self.failures += 1
        return False

    def close(self):
        self._closed = True
        self._wake.set()
        self._thread.join(self._timeout + 1)
        self.flush()

    def _run(self):
        while not self._closed:
            self._wake.wait(self._flush_interval)
            if self._closed:
                return
            self.flush()

    def _post(self, body, content_type):
        u = urlparse(self._endpoint)
        if u.scheme in ("unix", ""):
            conn = _UnixHTTPConnection(u.path or self._endpoint, self._timeout)
            path = "/v1/metrics"
        else:
            conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=self._timeout)
            path = u.path if u.path and u.path != "/" else "/v1/metrics"
        try:
            conn.request("POST", path, body, {"Content-Type": content_type})
            resp = conn.getresponse()
            answer = resp.read()
            if resp.status != 200:
                self.last_error = f"{resp.status}: {answer[:300].decode(errors='replace')}"
            return resp.status
        finally:
            conn.close()


def _otlp_json(batch):
    def gauge(name, unit, idx):
        points = []
        for t, step, *values in batch:
            v = values[idx]
            if v is None:
                continue
            points.append(
                {
                    "timeUnixNano": str(t),
                    "asDouble": float(v),
                    "attributes": [{"key": "step", "value": {"intValue": str(step)}}],
                }
            )
        return {"name": name, "unit": unit, "gauge": {"dataPoints": points}} if points else None

    metrics = [
        m
        for m in (
            gauge(STEP_DURATION, "s", 0),
            gauge(STEP_COMPUTE_DURATION, "s", 1),
            gauge(STEP_TOKENS, "{token}", 2),
        )
        if m
    ]
    return {"resourceMetrics": [{"scopeMetrics": [{"scope": {"name": "gcm-reporter"}, "metrics": metrics}]}]}


# Protobuf by hand: an ExportMetricsServiceRequest with one ResourceMetrics, one ScopeMetrics and a Gauge per metric
# (field numbers from opentelemetry/proto/metrics/v1/metrics.proto and common.proto), so no protobuf package is
# needed.
def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF  # int64 as protobuf writes it (two's complement)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):  # length-delimited
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _otlp_protobuf(batch):
    step_key = _field(1, b"step")

    def gauge(name, unit, idx):
        points = bytearray()
        for t, step, *values in batch:
            v = values[idx]
            if v is None:
                continue
            attr = _field(7, step_key + _field(2, _varint(3 << 3) + _varint(step)))
            point = _varint(3 << 3 | 1) + struct.pack("<Q", t) + _varint(4 << 3 | 1) + struct.pack("<d", float(v))
            points += _field(1, point + attr)
        if not points:
            return b""
        return _field(2, _field(1, name.encode()) + _field(3, unit.encode()) + _field(5, bytes(points)))

    metrics = gauge(STEP_DURATION, "s", 0) + gauge(STEP_COMPUTE_DURATION, "s", 1) + gauge(STEP_TOKENS, "{token}", 2)
    scope = _field(1, _field(1, b"gcm-reporter"))
    return _field(1, _field(2, scope + metrics))


# Trainer callbacks. Neither Lightning nor transformers is needed to import this module: each callback subclasses
# the framework's own base class when it is installed (Lightning's Trainer accepts only its Callback subclasses,
# and Hugging Face's CallbackHandler calls every event on every callback, which its TrainerCallback defines as
# no-ops), else object, and only the hooks below do anything. A step runs from the batch's start to its end;
# the compute ends after the backward pass, before the optimizer step.


def _base_class(candidates):
    import importlib  # noqa: PLC0415 (only to look for an optional framework)

    for module, name in candidates:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    return object


class _StepTimer:
    """The state a callback keeps between a framework's hooks: the step open now, if any."""

    def __init__(self, reporter, tokens_per_step, owns_reporter):
        self.reporter = reporter
        self.tokens_per_step = tokens_per_step
        self.owns_reporter = owns_reporter
        self.current = None

    def begin(self, batch=None):
        if self.current is not None:  # a step whose end hook never came (an exception, a skipped batch)
            self.current.__exit__(None, None, None)
        tokens = self.tokens_per_step(batch) if callable(self.tokens_per_step) else self.tokens_per_step
        self.current = self.reporter.step(tokens=tokens)
        self.current.__enter__()

    def compute_done(self):
        if self.current is not None:
            self.current.compute_done()

    def end(self):
        if self.current is not None:
            step, self.current = self.current, None
            step.__exit__(None, None, None)

    def close(self):
        self.end()
        if self.owns_reporter:
            self.reporter.close()
        else:
            self.reporter.flush()


class GcmLightningCallback(
    _base_class([("lightning.pytorch", "Callback"), ("pytorch_lightning", "Callback")])
):
    """PyTorch Lightning: `Trainer(callbacks=[GcmLightningCallback()])`.

    `tokens_per_step` is a number, or a function of the batch returning one (None: not reported). Pass a
    `reporter` to share one; otherwise the callback makes its own (keyword arguments go to StepReporter) and
    closes it when training ends.
    """

    def __init__(self, reporter=None, tokens_per_step=None, **reporter_args):
        super().__init__()
        self._gcm = _StepTimer(reporter or StepReporter(**reporter_args), tokens_per_step, reporter is None)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx, *args):
        self._gcm.begin(batch)

    def on_after_backward(self, trainer, pl_module):
        self._gcm.compute_done()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, *args):
        self._gcm.end()

    def on_train_end(self, trainer, pl_module):
        self._gcm.close()

    @property
    def reporter(self):
        return self._gcm.reporter


class GcmHuggingFaceCallback(_base_class([("transformers", "TrainerCallback")])):
    """Hugging Face Trainer: `Trainer(..., callbacks=[GcmHuggingFaceCallback()])`.

    A step is one optimizer step (all its gradient-accumulation micro-batches); the compute ends at
    `on_pre_optimizer_step` (transformers >= 4.41), else it is not reported. `tokens_per_step`: a number (the
    Trainer's hooks do not see the batch). `reporter` and the keyword arguments as for GcmLightningCallback.
    """

    def __init__(self, reporter=None, tokens_per_step=None, **reporter_args):
        super().__init__()
        self._gcm = _StepTimer(reporter or StepReporter(**reporter_args), tokens_per_step, reporter is None)

    def on_step_begin(self, args, state, control, **kwargs):
        self._gcm.begin()

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        self._gcm.compute_done()

    def on_step_end(self, args, state, control, **kwargs):
        self._gcm.end()

    def on_train_end(self, args, state, control, **kwargs):
        self._gcm.close()

    @property
    def reporter(self):
        return self._gcm.reporter
