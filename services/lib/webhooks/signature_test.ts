import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { secretKeyBytes, signWebhook } from "./signature.ts";

describe("signWebhook", () => {
  it("gives the Standard Webhooks specification's own test vector", async () => {
    // The reference libraries' "sign function works" case (standard-webhooks,
    // libraries/javascript/src/webhook.test.ts and the other languages' tests).
    const signature = await signWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", {
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
    });
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("is what the independent standardwebhooks package accepts, and no other body", async () => {
    const secret = "whsec_" +
      btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(48))));
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: "lead.created", data: { name: "Zoë" } });
    const headers = {
      "webhook-id": "msg_abc",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": await signWebhook(secret, { id: "msg_abc", timestamp, body }),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace("Zoë", "Zoe"), headers)).toThrow();
  });
});

describe("secretKeyBytes", () => {
  const b64 = (n: number) => btoa("x".repeat(n));

  it("takes whsec_ and padded base64 of 24 to 64 bytes", () => {
    expect(secretKeyBytes(`whsec_${b64(24)}`)?.length).toBe(24);
    expect(secretKeyBytes(`whsec_${b64(64)}`)?.length).toBe(64);
    expect(secretKeyBytes(`whsec_${b64(40)}`)?.length).toBe(40);
  });

  it("refuses fewer or more bytes, another prefix, and what is not base64", () => {
    expect(secretKeyBytes(`whsec_${b64(23)}`)).toBeUndefined();
    expect(secretKeyBytes(`whsec_${b64(65)}`)).toBeUndefined();
    expect(secretKeyBytes(b64(32))).toBeUndefined();
    expect(secretKeyBytes(`whsec_${b64(32).slice(1)}`)).toBeUndefined();
    expect(secretKeyBytes(`whsec_${b64(31)}!`)).toBeUndefined();
    expect(secretKeyBytes(`whsec_${b64(34).replace(/=+$/, "")}`)).toBeUndefined();
  });
});
