// An OTLP/HTTP trace receiver on loopback for the tracing tests. Every
// export is checked as a collector would: JSON with the proto3 mapping of
// the official OTLP definitions (opentelemetry-proto, compiled in
// @opentelemetry/otlp-transformer's generated protobufjs root): every
// field known, each of its type, enums as integers, ids as lowercase hex
// of the right length, 64-bit integers as decimal strings. A bad export is
// answered 400 and recorded in `errors`, which the tests expect empty.
//
// mode: 'ok' (200 {}), 'fail' (500), 'slow' (answers after slowMs), or
// 'down' (the port is closed: connections are refused).
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const ID_FIELDS = { traceId: 32, spanId: 16, parentSpanId: 16 };
const INT64_FIELDS = new Set(['startTimeUnixNano', 'endTimeUnixNano', 'timeUnixNano', 'intValue']);

// The JSON mapping's forms turned into what protobufjs's verify takes:
// ids to bytes, 64-bit decimal strings to {low, high}. Anything of another
// form is an error.
function toProto(v, key, path, errors) {
  if (Array.isArray(v)) return v.map((e, i) => toProto(e, key, `${path}[${i}]`, errors));
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const [k, e] of Object.entries(v)) out[k] = toProto(e, k, `${path}.${k}`, errors);
    return out;
  }
  if (key in ID_FIELDS) {
    if (typeof v !== 'string' || !new RegExp(`^[0-9a-f]{${ID_FIELDS[key]}}$`).test(v) || /^0+$/.test(v)) {
      errors.push(`${path}: ${JSON.stringify(v)} is not ${ID_FIELDS[key]} lowercase hex digits (and not all zero)`);
    }
    return Buffer.from(String(v), 'hex');
  }
  if (INT64_FIELDS.has(key)) {
    if (!(typeof v === 'string' && /^-?\d+$/.test(v)) && !Number.isInteger(v)) {
      errors.push(`${path}: ${JSON.stringify(v)} is not a 64-bit integer`);
      return 0;
    }
    const b = BigInt.asUintN(64, BigInt(v));
    return { low: Number(b & 0xffffffffn) | 0, high: Number(b >> 32n) | 0, unsigned: key !== 'intValue' };
  }
  return v;
}

// Keys the definitions do not have: the round trip through the protobuf
// types (with defaults) lists every known field of each message.
function unknownKeys(input, known, path, errors) {
  if (Array.isArray(input)) {
    input.forEach((e, i) => unknownKeys(e, Array.isArray(known) ? known[i] : undefined, `${path}[${i}]`, errors));
    return;
  }
  if (input === null || typeof input !== 'object') return;
  for (const k of Object.keys(input)) {
    if (known === null || typeof known !== 'object' || !(k in known)) errors.push(`${path}.${k}: not a field of the OTLP definitions`);
    else unknownKeys(input[k], known[k], `${path}.${k}`, errors);
  }
}

export function validate(body) {
  const errors = [];
  let json;
  try {
    json = JSON.parse(body);
  } catch (e) {
    return { errors: [`not JSON: ${e.message}`] };
  }
  const proto = toProto(json, '', '$', errors);
  const why = Request.verify(proto);
  if (why) errors.push(`verify: ${why}`);
  if (errors.length === 0) {
    const msg = Request.decode(Request.encode(Request.fromObject(proto)).finish());
    const back = Request.toObject(msg, { defaults: true, arrays: true, objects: true, longs: String, enums: Number, bytes: String });
    unknownKeys(json, back, '$', errors);
  }
  return { errors, json };
}

const attrValue = (v) => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;

// Spans flattened: ids, name, kind, attributes as an object, status, and
// the resource's service.name.
function flatten(json) {
  const out = [];
  for (const rs of json.resourceSpans ?? []) {
    const resource = Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, attrValue(a.value)]));
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          ...s,
          attrs: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, attrValue(a.value)])),
          service: resource['service.name'],
          scope: ss.scope?.name,
        });
      }
    }
  }
  return out;
}

export async function otlpReceiver({ mode = 'ok', slowMs = 10000 } = {}) {
  const r = { spans: [], errors: [], requests: 0, headers: [], mode, slowMs };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      r.requests++;
      r.headers.push(req.headers);
      const answer = (status, body) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      };
      if (req.method !== 'POST' || req.url !== '/v1/traces') return answer(404, '{}');
      if (req.headers['content-type'] !== 'application/json') r.errors.push(`content-type ${req.headers['content-type']}`);
      const { errors, json } = validate(Buffer.concat(chunks).toString('utf8'));
      if (errors.length > 0) {
        r.errors.push(...errors);
        return answer(400, JSON.stringify({ code: 3, message: errors.join('; ') }));
      }
      if (r.mode === 'fail') return answer(500, '{"code":13,"message":"failing on purpose"}');
      const done = () => {
        r.spans.push(...flatten(json));
        answer(200, '{}');
      };
      if (r.mode === 'slow') setTimeout(done, r.slowMs);
      else done();
    });
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  r.port = server.address().port;
  r.url = `http://127.0.0.1:${r.port}`;
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  // Down: nothing listens on the port any more; up again on the same port.
  r.down = () => new Promise((ok) => { server.close(ok); for (const s of sockets) s.destroy(); });
  r.up = () => new Promise((ok) => server.listen(r.port, '127.0.0.1', ok));
  r.close = () => new Promise((ok) => { for (const s of sockets) s.destroy(); server.close(() => ok()); });
  r.trace = (traceId) => r.spans.filter((s) => s.traceId === traceId);
  return r;
}
