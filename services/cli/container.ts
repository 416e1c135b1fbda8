/**
 * The image's entry point (deploy/Containerfile): a container runs one
 * service (`service NAME`) or one admin command (`admin CMD ...`), with the
 * same settings and behaviour as `deno task service` and `deno task admin`.
 */
import { main as service } from "./service.ts";
import { main as admin } from "./admin.ts";

const [command, ...args] = Deno.args;
if (command === "service") {
  await service(args);
} else if (command === "admin") {
  Deno.exit(await admin(args));
} else {
  console.error("usage: service gateway|auth|content|ingest | admin COMMAND ...");
  Deno.exit(2);
}
