// One unary gRPC call with Node's @grpc/grpc-js (pinned in package.json), its retries left to grpc-js
// itself: the client `faultline score --grpc` judges against the service config it was given.
//
//   node grpc_node_client.mjs URL PATH [--service-config FILE] [--key KEY] [--body TEXT] [--timeout S]
//
// The same arguments and exit codes as grpc_python_client.py: URL is faultline's base URL
// (http://127.0.0.1:PORT), PATH the method's path; --service-config enables grpc-js's retries with that
// JSON; the message is TEXT's bytes (no stubs: faultline never decodes a message). Exit 0 on OK, 1 on
// any other status (printed), 2 on bad input, 77 when grpc-js is not installed.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

let grpc;
try {
  grpc = await import("@grpc/grpc-js");
} catch {
  console.error("grpc_node_client: @grpc/grpc-js is missing (clients/realclients/install.sh)");
  process.exit(77);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "service-config": { type: "string" },
    key: { type: "string" },
    body: { type: "string", default: "" },
    timeout: { type: "string", default: "5" },
  },
});
const [url, path] = positionals;
let where;
try {
  where = new URL(url);
} catch {
  where = null;
}
if (!where || where.protocol !== "http:" || !where.port || !path) {
  console.error(`grpc_node_client: expected http://HOST:PORT and a method path, got ${url} ${path}`);
  process.exit(2);
}

const options = values["service-config"]
  ? { "grpc.service_config": readFileSync(values["service-config"], "utf8"), "grpc.enable_retries": 1 }
  : { "grpc.service_config_disable_resolution": 1, "grpc.enable_retries": 0 };
const client = new grpc.Client(`${where.hostname}:${where.port}`, grpc.credentials.createInsecure(), options);
const metadata = new grpc.Metadata();
if (values.key) metadata.set("idempotency-key", values.key);
const deadline = new Date(Date.now() + Number(values.timeout) * 1000);
const identity = (b) => b;
client.makeUnaryRequest(path, identity, identity, Buffer.from(values.body), metadata, { deadline }, (error) => {
  client.close();
  if (error) {
    console.log(`${grpc.status[error.code]}: ${error.details}`);
    process.exit(1);
  }
  console.log("OK");
  process.exit(0);
});
