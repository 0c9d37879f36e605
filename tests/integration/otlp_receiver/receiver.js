// Starts @elastic/mockotlpserver on ephemeral loopback ports for the integration tests and the demo.
// Prints one JSON line with the URLs, then one JSON line per received request:
//   {"signal": "metrics"|"logs"|"traces", "data": <the request, attributes normalised to objects>}
// Stops on SIGTERM/SIGINT or when its stdin closes (so a crashed test never leaves it running).
'use strict';
const {MockOtlpServer, normalizeMetrics, normalizeLogs, normalizeTrace} = require('@elastic/mockotlpserver');

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
// The ready line comes first, always: server.start() resolves once both services listen, and a sender that was
// retrying against the fixed port (a test's restart after an outage) can have a request received by the HTTP
// service before then. Such requests are printed after the ready line, in the order they came.
let ready = false;
const early = [];
const received = (obj) => (ready ? out(obj) : early.push(obj));

// protobufjs's toJSON leaves out empty repeated fields, so an empty ArrayValue (an attribute whose value is an empty
// list, as slurm_processor sends for job keys that no job on the node has) reaches mockotlpserver's normalisation
// without `values`, and it throws. Then normalise the request's JSON form (what an OTLP/HTTP JSON request would
// have given) with the empty lists put back.
const withEmptyArrays = (obj) => {
    if (Array.isArray(obj)) {
        obj.forEach(withEmptyArrays);
    } else if (obj && typeof obj === 'object') {
        if (obj.arrayValue && !Array.isArray(obj.arrayValue.values)) obj.arrayValue.values = [];
        Object.values(obj).forEach(withEmptyArrays);
    }
    return obj;
};
const normalized = (normalize, req) => {
    try {
        return normalize(req);
    } catch (err) {
        return normalize(withEmptyArrays(JSON.parse(JSON.stringify(req))));
    }
};

async function main() {
    const server = new MockOtlpServer({
        logLevel: 'warn',
        services: ['http', 'grpc'],
        hostname: '127.0.0.1',
        httpPort: Number(process.env.OTLP_HTTP_PORT || 0),
        grpcPort: Number(process.env.OTLP_GRPC_PORT || 0),
        onMetrics: (m) => received({signal: 'metrics', data: normalized(normalizeMetrics, m)}),
        onLogs: (l) => received({signal: 'logs', data: normalized(normalizeLogs, l)}),
        onTrace: (t) => received({signal: 'traces', data: normalized(normalizeTrace, t)}),
    });
    await server.start();
    out({ready: true, http: server.httpUrl, grpc: server.grpcUrl});
    ready = true;
    early.splice(0).forEach(out);
    const stop = async () => { try { await server.close(); } finally { process.exit(0); } };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    if (!process.env.OTLP_RECEIVER_DETACHED) {
        process.stdin.on('end', stop);
        process.stdin.resume();
    }
}
main().catch((err) => { console.error(err); process.exit(1); });
