import { describe, expect, it } from "vitest";
import { listeningLine } from "./service.ts";

describe("the service's start-up line", () => {
  it("names the address it is bound to", () => {
    expect(listeningLine("auth", "0.0.0.0", 50051)).toBe("auth listening on http://0.0.0.0:50051");
    expect(listeningLine("gateway", "127.0.0.1", 8080)).toBe(
      "gateway listening on http://127.0.0.1:8080",
    );
    expect(listeningLine("content", "10.0.0.7", 4000)).toBe(
      "content listening on http://10.0.0.7:4000",
    );
  });

  it("brackets an IPv6 address", () => {
    expect(listeningLine("ingest", "::", 50051)).toBe("ingest listening on http://[::]:50051");
  });
});
