/**
 * The services as a plain gRPC client sees them (@grpc/grpc-js, not
 * Connect): health checks, a call, typed errors, and server reflection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import {
  create,
  type DescMessage,
  fromBinary,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
} from "../services/lib/gen/grpc/health/v1/health_pb.ts";
import {
  ResolveSiteKeyRequestSchema,
  ResolveSiteKeyResponseSchema,
} from "../services/lib/gen/crm/auth/v1/auth_pb.ts";
import {
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
} from "../services/lib/gen/grpc/reflection/v1/reflection_pb.ts";
import { ErrorDetailSchema } from "../services/lib/gen/crm/common/v1/error_pb.ts";
import { readFixture, startTestSystem, type TestSystem } from "./helpers/system.ts";
import { openPlatform } from "../services/lib/platform.ts";
import { loadConfig } from "../services/lib/config.ts";
import { startContentService } from "../services/content/main.ts";
import { contentMigrations } from "../services/content/migrations/mod.ts";
import { serviceClient } from "../services/lib/rpc/client.ts";
import { SiteAdminService } from "../services/lib/gen/crm/admin/v1/site_admin_pb.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  function unary<I extends DescMessage, O extends DescMessage>(
    client: grpc.Client,
    path: string,
    input: I,
    output: O,
    value: MessageShape<I>,
  ): Promise<MessageShape<O>> {
    return new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        path,
        (m: MessageShape<I>) => Buffer.from(toBinary(input, m)),
        (b: Buffer) => fromBinary(output, new Uint8Array(b)),
        value,
        (
          error: grpc.ServiceError | null,
          result?: MessageShape<O>,
        ) => (error ? reject(error) : resolve(result!)),
      );
    });
  }

  const hostOf = (url: string) => new URL(url).host;

  describe("services over plain gRPC", () => {
    let sys: TestSystem;
    let auth: grpc.Client;

    beforeAll(async () => {
      sys = await startTestSystem({ storage, seed: await readFixture("contract-example.json") });
      auth = new grpc.Client(hostOf(sys.config.authUrl), grpc.credentials.createInsecure());
    });
    afterAll(async () => {
      auth?.close();
      await sys?.close();
    });

    it("answers the standard health check, overall and per service", async () => {
      for (const url of [sys.config.authUrl, sys.config.contentUrl, sys.config.ingestUrl]) {
        const client = new grpc.Client(hostOf(url), grpc.credentials.createInsecure());
        const overall = await unary(
          client,
          "/grpc.health.v1.Health/Check",
          HealthCheckRequestSchema,
          HealthCheckResponseSchema,
          create(HealthCheckRequestSchema, { service: "" }),
        );
        expect(overall.status).toBe(ServingStatus.SERVING);
        client.close();
      }
      const named = await unary(
        auth,
        "/grpc.health.v1.Health/Check",
        HealthCheckRequestSchema,
        HealthCheckResponseSchema,
        create(HealthCheckRequestSchema, { service: "crm.auth.v1.AuthService" }),
      );
      expect(named.status).toBe(ServingStatus.SERVING);
      await expect(
        unary(
          auth,
          "/grpc.health.v1.Health/Check",
          HealthCheckRequestSchema,
          HealthCheckResponseSchema,
          create(HealthCheckRequestSchema, { service: "no.such.Service" }),
        ),
      ).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    });

    it("resolves a site key and refuses an unknown one with a typed reason", async () => {
      const ok = await unary(
        auth,
        "/crm.auth.v1.AuthService/ResolveSiteKey",
        ResolveSiteKeyRequestSchema,
        ResolveSiteKeyResponseSchema,
        create(ResolveSiteKeyRequestSchema, { key: "pk_0123456789abcdef0123456789abcdef" }),
      );
      expect(ok.siteId).toBe("demo");
      expect(Number(ok.cacheUntilMs)).toBeGreaterThan(Date.now());
      const error = await unary(
        auth,
        "/crm.auth.v1.AuthService/ResolveSiteKey",
        ResolveSiteKeyRequestSchema,
        ResolveSiteKeyResponseSchema,
        create(ResolveSiteKeyRequestSchema, { key: "pk_ffffffffffffffffffffffffffffffff" }),
      ).then(() => undefined, (e: grpc.ServiceError) => e);
      if (!error) throw new Error("an unknown key was accepted");
      expect(error.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(error.details).toBe("invalid_key");
      // The reason also travels as a typed detail inside google.rpc.Status.
      const [raw] = error.metadata.get("grpc-status-details-bin") as Buffer[];
      expect(raw.length).toBeGreaterThan(0);
      expect(Buffer.from(raw).includes(Buffer.from(ErrorDetailSchema.typeName))).toBe(true);
    });

    it("lists its services through server reflection", async () => {
      const call = auth.makeBidiStreamRequest(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        (m: MessageShape<typeof ServerReflectionRequestSchema>) =>
          Buffer.from(toBinary(ServerReflectionRequestSchema, m)),
        (b: Buffer) => fromBinary(ServerReflectionResponseSchema, new Uint8Array(b)),
      );
      const answers: MessageShape<typeof ServerReflectionResponseSchema>[] = [];
      const done = new Promise<void>((resolve, reject) => {
        call.on(
          "data",
          (m: MessageShape<typeof ServerReflectionResponseSchema>) => answers.push(m),
        );
        call.on("end", () => resolve());
        call.on("error", reject);
      });
      call.write(
        create(ServerReflectionRequestSchema, {
          messageRequest: { case: "listServices", value: "" },
        }),
      );
      call.write(
        create(ServerReflectionRequestSchema, {
          messageRequest: { case: "fileContainingSymbol", value: "crm.auth.v1.AuthService" },
        }),
      );
      call.end();
      await done;
      const list = answers[0].messageResponse;
      expect(list.case).toBe("listServicesResponse");
      const names = list.case === "listServicesResponse"
        ? list.value.service.map((s) => s.name)
        : [];
      expect(names).toEqual(
        expect.arrayContaining([
          "crm.auth.v1.AuthService",
          "crm.auth.v1.AuthAdminService",
          "crm.admin.v1.SiteAdminService",
          "grpc.health.v1.Health",
        ]),
      );
      const file = answers[1].messageResponse;
      expect(file.case).toBe("fileDescriptorResponse");
      expect(file.case === "fileDescriptorResponse" && file.value.fileDescriptorProto.length)
        .toBeGreaterThan(0);
    });
  });

  describe("a service before its schema is migrated", () => {
    it("is NOT_SERVING until admin migrate, then SERVING", async () => {
      const config = loadConfig({ CRM_DATA_DIR: "memory://", LOG_LEVEL: "error" }, "service");
      const platform = await openPlatform(config, { database: true });
      const service = await startContentService(platform, {
        host: "127.0.0.1",
        port: 0,
        migrateOnStart: false,
      });
      const client = new grpc.Client(hostOf(service.url), grpc.credentials.createInsecure());
      try {
        const check = () =>
          unary(
            client,
            "/grpc.health.v1.Health/Check",
            HealthCheckRequestSchema,
            HealthCheckResponseSchema,
            create(HealthCheckRequestSchema, { service: "" }),
          );
        expect((await check()).status).toBe(ServingStatus.NOT_SERVING);
        const admin = serviceClient(SiteAdminService, service.url);
        const migrated = await admin.migrate({});
        // Every migration of the schema, from the first, in order: a fresh store.
        expect(migrated.appliedVersions).toEqual(contentMigrations.map((m) => m.version));
        expect(migrated.appliedVersions[0]).toBe(1);
        expect((await check()).status).toBe(ServingStatus.SERVING);
      } finally {
        client.close();
        await service.close();
        await platform.close();
      }
    });
  });
});
