import { describe, expect, it } from "vitest";
import type { Client } from "@connectrpc/connect";
import type { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { createLocalBus } from "../lib/bus.ts";
import { ManualClock } from "../lib/clock.ts";
import { Code, publicError } from "../lib/errors.ts";
import { ShareCallers } from "./share_callers.ts";

const ID = `sh_${"c".repeat(32)}`;

/** auth-service as far as share links go: one link, password "pw", answers counted. */
function fakeAuth(clock: ManualClock, state = { live: true, calls: 0 }) {
  const auth = {
    resolveShareLink({ id, password }: { id: string; password: string }) {
      state.calls++;
      if (!state.live || id !== ID) {
        return Promise.reject(publicError(Code.Unauthenticated, "invalid_key"));
      }
      if (password !== "pw") {
        return Promise.reject(publicError(Code.Unauthenticated, "password_required"));
      }
      return Promise.resolve({ siteId: "demo", cacheUntilMs: BigInt(clock.now() + 60_000) });
    },
    describeShareLink({ id }: { id: string }) {
      state.calls++;
      if (!state.live || id !== ID) {
        return Promise.reject(publicError(Code.Unauthenticated, "invalid_key"));
      }
      return Promise.resolve({
        siteId: "demo",
        passwordRequired: true,
        embedOrigins: ["https://intranet.example"],
        cacheUntilMs: BigInt(clock.now() + 60_000),
      });
    },
  } as unknown as Client<typeof AuthService>;
  return { auth, state };
}

describe("the gateway's share link answers", () => {
  it("keeps a right password's answer until auth-service's deadline, never a wrong one", async () => {
    const clock = new ManualClock(1_000_000);
    const { auth, state } = fakeAuth(clock);
    const shares = new ShareCallers(auth, { bus: createLocalBus(), clock, keyCacheTtlS: 60 });
    expect(await shares.link(ID, "pw")).toEqual({ ok: true, siteId: "demo" });
    expect(await shares.link(ID, "pw")).toEqual({ ok: true, siteId: "demo" });
    expect(state.calls).toBe(1);
    for (let i = 0; i < 3; i++) {
      expect(await shares.link(ID, "nope")).toEqual({ ok: false, reason: "password_required" });
    }
    expect(state.calls).toBe(4);
    clock.advance(60_000);
    await shares.link(ID, "pw");
    expect(state.calls).toBe(5);
    shares.close();
  });

  it("refuses a malformed link without asking, and an unknown one as invalid_key", async () => {
    const clock = new ManualClock(1_000_000);
    const { auth, state } = fakeAuth(clock);
    const shares = new ShareCallers(auth, { bus: createLocalBus(), clock, keyCacheTtlS: 60 });
    expect(await shares.link("rk_x", "")).toEqual({ ok: false, reason: "invalid_key" });
    expect(await shares.page("sh_x")).toEqual({ ok: false });
    expect(state.calls).toBe(0);
    const unknown = `sh_${"d".repeat(32)}`;
    expect(await shares.link(unknown, "")).toEqual({ ok: false, reason: "invalid_key" });
    expect(await shares.page(unknown)).toEqual({ ok: false });
    shares.close();
  });

  it("forgets every answer about a link when key-changed names it", async () => {
    const clock = new ManualClock(1_000_000);
    const bus = createLocalBus();
    const { auth, state } = fakeAuth(clock);
    const shares = new ShareCallers(auth, { bus, clock, keyCacheTtlS: 60 });
    expect(await shares.page(ID)).toMatchObject({
      ok: true,
      passwordRequired: true,
      embedOrigins: ["https://intranet.example"],
    });
    expect((await shares.link(ID, "pw")).ok).toBe(true);
    state.live = false;
    // Still the kept answers until told.
    expect((await shares.link(ID, "pw")).ok).toBe(true);
    await bus.publish("key-changed", ID);
    expect(await shares.link(ID, "pw")).toEqual({ ok: false, reason: "invalid_key" });
    expect(await shares.page(ID)).toEqual({ ok: false });
    shares.close();
  });
});
