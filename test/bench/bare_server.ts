/**
 * The baseline of the content benchmark: a bare Deno.serve answering every
 * request with the same bytes and Content-Type the system sends for the hot
 * page. Usage: deno run -A test/bench/bare_server.ts PORT BODY_FILE
 */
const [port, file] = Deno.args;
const body = await Deno.readFile(file);
Deno.serve(
  {
    hostname: "127.0.0.1",
    port: Number(port),
    onListen: ({ port }) => console.log(`bare server listening on http://127.0.0.1:${port}`),
  },
  () => new Response(body, { headers: { "content-type": "application/json" } }),
);
