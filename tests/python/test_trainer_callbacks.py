"""python/gcm_reporter.py's trainer callbacks, driven by stand-ins of Lightning's and Hugging Face's training loops
(the hooks in the order each framework calls them), reporting over a real unix socket to a stand-in of the agent's
endpoint that keeps what it receives. Neither framework is installed here: the module must import without them.
Run: python3 -m unittest discover -s tests/python (CTest: python_reporter_callbacks)."""

import http.server
import json
import os
import socketserver
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import gcm_reporter  # noqa: E402


class _Endpoint(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _Handler(http.server.BaseHTTPRequestHandler):
    def address_string(self):  # a unix socket's peer has no host
        return "local"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests.append((self.path, self.headers["Content-Type"], json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def _points(requests, name):
    out = []
    for _, _, body in requests:
        for rm in body["resourceMetrics"]:
            for sm in rm["scopeMetrics"]:
                for m in sm["metrics"]:
                    if m["name"] == name:
                        out += [p["asDouble"] for p in m["gauge"]["dataPoints"]]
    return out


class TrainerCallbacks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gcm-reporter-")
        self.sock = os.path.join(self.dir, "job-signals.sock")
        self.server = _Endpoint(self.sock, _Handler)
        self.server.requests = []
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def reporter_args(self):
        return {"endpoint": "unix://" + self.sock, "flush_interval": 60, "encoding": "json"}

    def test_the_module_imports_without_either_framework(self):
        import importlib.util

        if importlib.util.find_spec("lightning") is None and importlib.util.find_spec("pytorch_lightning") is None:
            self.assertIs(gcm_reporter.GcmLightningCallback.__mro__[1], object)
        if importlib.util.find_spec("transformers") is None:
            self.assertIs(gcm_reporter.GcmHuggingFaceCallback.__mro__[1], object)

    def test_lightning_steps_with_their_compute_and_tokens_reach_the_agent(self):
        cb = gcm_reporter.GcmLightningCallback(tokens_per_step=lambda batch: len(batch) * 10, **self.reporter_args())
        trainer, module = object(), object()
        for i in range(3):  # Lightning's order within fit(): batch start, backward, batch end
            batch = [0] * (i + 1)
            cb.on_train_batch_start(trainer, module, batch, i)
            time.sleep(0.02)  # forward + backward
            cb.on_after_backward(trainer, module)
            time.sleep(0.01)  # the optimizer step
            cb.on_train_batch_end(trainer, module, None, batch, i)
        cb.on_train_end(trainer, module)  # owns its reporter: closes it, sending what is left
        durations = _points(self.server.requests, "gcm.job.step.duration")
        computes = _points(self.server.requests, "gcm.job.step.compute_duration")
        self.assertEqual(len(durations), 3)
        self.assertEqual(len(computes), 3)
        for d, c in zip(durations, computes):
            self.assertGreaterEqual(c, 0.02)
            self.assertGreaterEqual(d, c + 0.01)
        self.assertEqual(_points(self.server.requests, "gcm.job.step.tokens"), [10.0, 20.0, 30.0])
        self.assertEqual(self.server.requests[0][0], "/v1/metrics")
        self.assertEqual(cb.reporter.sent, 3)

    def test_a_step_whose_end_hook_never_came_is_closed_by_the_next(self):
        cb = gcm_reporter.GcmLightningCallback(**self.reporter_args())
        cb.on_train_batch_start(None, None, [], 0)  # this batch raised: no batch end
        cb.on_train_batch_start(None, None, [], 1)
        cb.on_train_batch_end(None, None, None, [], 1)
        cb.on_train_end(None, None)
        self.assertEqual(len(_points(self.server.requests, "gcm.job.step.duration")), 2)
        self.assertEqual(_points(self.server.requests, "gcm.job.step.compute_duration"), [])

    def test_hugging_face_steps_reach_the_agent_through_a_shared_reporter(self):
        reporter = gcm_reporter.StepReporter(**self.reporter_args())
        cb = gcm_reporter.GcmHuggingFaceCallback(reporter=reporter, tokens_per_step=4096)
        args, state, control = object(), object(), object()
        for _ in range(4):  # the Trainer's order: step begin, (micro-batches), pre optimizer step, step end
            cb.on_step_begin(args, state, control, model=None)
            time.sleep(0.01)
            cb.on_pre_optimizer_step(args, state, control)
            cb.on_step_end(args, state, control, model=None)
        cb.on_train_end(args, state, control)  # a shared reporter is flushed, not closed
        self.assertEqual(len(_points(self.server.requests, "gcm.job.step.compute_duration")), 4)
        self.assertEqual(_points(self.server.requests, "gcm.job.step.tokens"), [4096.0] * 4)
        reporter.record(0.5)
        self.assertTrue(reporter.flush())  # still open
        self.assertEqual(reporter.sent, 5)
        reporter.close()


if __name__ == "__main__":
    unittest.main()
