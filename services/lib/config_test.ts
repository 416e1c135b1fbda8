import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, publicUrlOf, SECRET_SETTINGS } from "./config.ts";

const start = (env: Record<string, string>) => loadConfig(env, "start");

describe("STATS_WORK_MEM_MB", () => {
  it("is 64 unless set; 0 leaves the server's setting", () => {
    expect(start({}).statsWorkMemMb).toBe(64);
    expect(start({ STATS_WORK_MEM_MB: "0" }).statsWorkMemMb).toBe(0);
    expect(start({ STATS_WORK_MEM_MB: "256" }).statsWorkMemMb).toBe(256);
  });

  it("refuses what is not a whole number of MB up to 4096, naming the setting", () => {
    for (const bad of ["-1", "4097", "64MB", "1.5"]) {
      expect(() => start({ STATS_WORK_MEM_MB: bad })).toThrow(ConfigError);
      expect(() => start({ STATS_WORK_MEM_MB: bad })).toThrow(/STATS_WORK_MEM_MB/);
    }
  });
});

describe("LOG_LEVEL", () => {
  it("is info unless set to one of the four levels", () => {
    expect(start({}).logLevel).toBe("info");
    for (const level of ["debug", "info", "warn", "error"] as const) {
      expect(start({ LOG_LEVEL: level }).logLevel).toBe(level);
    }
  });

  it("refuses any other spelling, naming the setting", () => {
    for (const value of ["INFO", "warning", "trace", " info"]) {
      expect(() => start({ LOG_LEVEL: value })).toThrow(ConfigError);
      expect(() => start({ LOG_LEVEL: value })).toThrow(/^LOG_LEVEL must be one of debug, info/);
    }
  });
});

describe("OpenTelemetry settings with a closed set of values", () => {
  const good: Record<string, string[]> = {
    OTEL_EXPORTER_OTLP_PROTOCOL: ["http/protobuf", "http/json"],
    OTEL_TRACES_SAMPLER: ["always_on", "parentbased_traceidratio", "traceidratio"],
    OTEL_DENO_CONSOLE: ["capture", "replace", "ignore"],
    OTEL_DENO: ["true", "false"],
    OTEL_SDK_DISABLED: ["true", "false"],
    OTEL_TRACES_SAMPLER_ARG: ["0", "0.1", "1", "1.0"],
  };
  const bad: Record<string, string[]> = {
    OTEL_EXPORTER_OTLP_PROTOCOL: ["grpc", "http/JSON", "json"],
    OTEL_TRACES_SAMPLER: ["ratio", "parentbased", "ALWAYS_ON"],
    OTEL_DENO_CONSOLE: ["replaced", "off"],
    OTEL_DENO: ["1", "yes", "TRUE"],
    OTEL_SDK_DISABLED: ["1", "on"],
    OTEL_TRACES_SAMPLER_ARG: ["1.5", "-0.1", "10%", "abc"],
  };

  it("accept the documented values", () => {
    for (const [name, values] of Object.entries(good)) {
      for (const value of values) expect(() => start({ [name]: value })).not.toThrow();
    }
  });

  it("refuse others at start, naming the setting", () => {
    for (const [name, values] of Object.entries(bad)) {
      for (const value of values) {
        expect(() => start({ [name]: value })).toThrow(ConfigError);
        expect(() => start({ [name]: value })).toThrow(new RegExp(`^${name} must be `));
      }
    }
  });
});

describe("WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_INSECURE", () => {
  it("are off unless set to exactly 1", () => {
    expect(start({}).webhooks).toEqual({ allowPrivate: false, allowInsecure: false });
    expect(start({ WEBHOOK_ALLOW_PRIVATE: "", WEBHOOK_ALLOW_INSECURE: "" }).webhooks)
      .toEqual({ allowPrivate: false, allowInsecure: false });
    expect(start({ WEBHOOK_ALLOW_PRIVATE: "1" }).webhooks)
      .toEqual({ allowPrivate: true, allowInsecure: false });
    expect(start({ WEBHOOK_ALLOW_INSECURE: "1" }).webhooks)
      .toEqual({ allowPrivate: false, allowInsecure: true });
  });

  it("refuse any other value, naming the setting", () => {
    for (const value of ["0", "true", "yes", " 1", "on"]) {
      expect(() => start({ WEBHOOK_ALLOW_PRIVATE: value }))
        .toThrow(new ConfigError(`WEBHOOK_ALLOW_PRIVATE must be 1 or unset, got "${value}"`));
      expect(() => start({ WEBHOOK_ALLOW_INSECURE: value }))
        .toThrow(/^WEBHOOK_ALLOW_INSECURE must be 1 or unset/);
    }
  });
});

describe("NAME_FILE for the secret settings", () => {
  const VALUES: Record<string, string> = {
    DATABASE_URL: "postgres://crm:pw@db:5432/crm",
    DATABASE_READ_URL: "postgres://crm:pw@db-ro:5432/crm",
    REDIS_URL: "redis://:pw@redis:6379",
    ADMIN_TOKEN: "operator-token",
    ADMIN_TOKEN_NEXT: "next-operator-token",
    SMTP_URL: "smtps://mailer:pw@smtp.example:465",
  };
  /** Files in a map: a path that is not there fails as a missing file does. */
  const files = (contents: Record<string, string>) => (path: string) => {
    if (!(path in contents)) throw new Deno.errors.NotFound(`No such file or directory: ${path}`);
    return contents[path];
  };

  it("reads each secret setting from its file, dropping one trailing line break", () => {
    for (const name of SECRET_SETTINGS) {
      const env = { [`${name}_FILE`]: `/run/secrets/${name}` };
      for (const ending of ["", "\n", "\r\n"]) {
        const read = files({ [`/run/secrets/${name}`]: VALUES[name] + ending });
        // ADMIN_TOKEN_NEXT is a second token: it needs the first; a read replica, its primary.
        const needs: Record<string, Record<string, string>> = {
          ADMIN_TOKEN_NEXT: { ADMIN_TOKEN: "first" },
          DATABASE_READ_URL: { DATABASE_URL: VALUES.DATABASE_URL },
        };
        const config = loadConfig({ ...env, ...needs[name] }, "service", read);
        // The resolved value is what the setting itself would have given.
        const direct = loadConfig({ [name]: VALUES[name], ...needs[name] }, "service");
        expect(config, `${name} ${JSON.stringify(ending)}`).toEqual(direct);
      }
    }
    const both = loadConfig(
      { ADMIN_TOKEN_FILE: "/a", ADMIN_TOKEN_NEXT_FILE: "/b" },
      "service",
      files({ "/a": "one\n", "/b": "two\n" }),
    );
    expect([both.adminToken, both.adminTokenNext]).toEqual(["one", "two"]);
    expect(
      loadConfig({ DATABASE_URL_FILE: "/d" }, "service", files({ "/d": VALUES.DATABASE_URL }))
        .databaseUrl,
    ).toBe(VALUES.DATABASE_URL);
  });

  it("refuses a setting given both ways, naming it", () => {
    for (const name of SECRET_SETTINGS) {
      const env = { [name]: VALUES[name], [`${name}_FILE`]: "/run/secrets/x" };
      expect(() => loadConfig(env, "service", files({ "/run/secrets/x": VALUES[name] })))
        .toThrow(new ConfigError(`set ${name} or ${name}_FILE, not both`));
    }
  });

  it("refuses a missing or empty file, naming the setting and the path", () => {
    expect(() => loadConfig({ REDIS_URL_FILE: "/nope" }, "service", files({})))
      .toThrow(/^REDIS_URL_FILE: cannot read \/nope: No such file/);
    expect(() => loadConfig({ SMTP_URL_FILE: "/empty" }, "service", files({ "/empty": "\n" })))
      .toThrow(new ConfigError("SMTP_URL_FILE: /empty is empty"));
  });

  it("checks a value from a file as it checks the setting itself", () => {
    expect(() =>
      loadConfig({ DATABASE_URL_FILE: "/d" }, "service", files({ "/d": "mysql://db/crm" }))
    ).toThrow(/DATABASE_URL must use postgres: or postgresql:/);
  });

  it("reads a real file from disk by default", async () => {
    const path = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(path, "from-a-file\n");
      expect(loadConfig({ ADMIN_TOKEN_FILE: path }, "service").adminToken).toBe("from-a-file");
    } finally {
      await Deno.remove(path);
    }
  });

  it("leaves other settings' _FILE alone", () => {
    expect(loadConfig({ PORT_FILE: "/nope" }, "service", files({})).port).toBe(8080);
  });
});

describe("ADMIN_TOKEN_NEXT", () => {
  it("is a second token beside ADMIN_TOKEN, and refused alone", () => {
    expect(start({ ADMIN_TOKEN: "a", ADMIN_TOKEN_NEXT: "b" })).toMatchObject({
      adminToken: "a",
      adminTokenNext: "b",
    });
    expect(start({ ADMIN_TOKEN: "a" }).adminTokenNext).toBeUndefined();
    expect(() => start({ ADMIN_TOKEN_NEXT: "b" })).toThrow(/ADMIN_TOKEN_NEXT needs ADMIN_TOKEN/);
  });
});

describe("storage pools", () => {
  const pg = "postgres://db.internal/crm";

  it("default to 10 write and 4 report connections, reports bounded by 10 s, on the primary", () => {
    const config = start({ DATABASE_URL: pg });
    expect(config.pools).toEqual({ writeSize: 10, reportSize: 4, reportTimeoutMs: 10_000 });
    expect(config.databaseReadUrl).toBeUndefined();
  });

  it("take the sizes, the timeout and a replica's URL", () => {
    const config = start({
      DATABASE_URL: pg,
      DATABASE_READ_URL: "postgres://db-ro.internal/crm",
      DATABASE_POOL_SIZE: "20",
      REPORT_POOL_SIZE: "2",
      REPORT_TIMEOUT_MS: "2500",
    });
    expect(config.pools).toEqual({ writeSize: 20, reportSize: 2, reportTimeoutMs: 2500 });
    expect(config.databaseReadUrl).toBe("postgres://db-ro.internal/crm");
  });

  it("refuse a pool of no connection, a timeout under 100 ms and a replica without a primary", () => {
    expect(() => start({ DATABASE_POOL_SIZE: "0" })).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => start({ REPORT_POOL_SIZE: "0" })).toThrow(/REPORT_POOL_SIZE/);
    expect(() => start({ REPORT_TIMEOUT_MS: "50" })).toThrow(/REPORT_TIMEOUT_MS/);
    expect(() => start({ DATABASE_READ_URL: "mysql://x/y", DATABASE_URL: pg }))
      .toThrow(/DATABASE_READ_URL/);
    expect(() => start({ DATABASE_READ_URL: "postgres://db-ro.internal/crm" }))
      .toThrow(/DATABASE_READ_URL needs DATABASE_URL/);
  });
});

describe("METRICS_PER_SITE and TRACE_TRUST_PARENT", () => {
  it("default to no site label and trusting a sampled parent", () => {
    expect(start({}).metricsPerSite).toBe(false);
    expect(start({ METRICS_PER_SITE: "1" }).metricsPerSite).toBe(true);
    expect(start({}).traceTrustParent).toBe(true);
    expect(start({ TRACE_TRUST_PARENT: "1" }).traceTrustParent).toBe(true);
    expect(start({ TRACE_TRUST_PARENT: "0" }).traceTrustParent).toBe(false);
  });

  it("refuse other values, naming the setting", () => {
    expect(() => start({ METRICS_PER_SITE: "yes" })).toThrow(/^METRICS_PER_SITE must be 1/);
    for (const value of ["true", "false", "2", " 0"]) {
      expect(() => start({ TRACE_TRUST_PARENT: value })).toThrow(
        new ConfigError(`TRACE_TRUST_PARENT must be one of 0, 1, got "${value}"`),
      );
    }
  });
});

describe("REFERRER_BLOCKLIST", () => {
  const read = (contents: Record<string, string>) => (path: string) => {
    if (!(path in contents)) throw new Deno.errors.NotFound(`No such file: ${path}`);
    return contents[path];
  };

  it("reads the file's host names at start, none when unset", () => {
    expect(loadConfig({}, "start").referrerBlocklist).toEqual([]);
    const config = loadConfig(
      { REFERRER_BLOCKLIST: "/b" },
      "service",
      read({ "/b": "# spam\nSpam.Example\n\nbad.test # x\n" }),
    );
    expect(config.referrerBlocklist).toEqual(["spam.example", "bad.test"]);
  });

  it("refuses an unreadable file or a line that is no host name; admin never reads it", () => {
    expect(() => loadConfig({ REFERRER_BLOCKLIST: "/none" }, "service", read({})))
      .toThrow(/REFERRER_BLOCKLIST: cannot read \/none/);
    expect(() =>
      loadConfig({ REFERRER_BLOCKLIST: "/b" }, "service", read({ "/b": "ok.example\nhttp://x\n" }))
    ).toThrow(/line 2/);
    expect(loadConfig({ REFERRER_BLOCKLIST: "/none" }, "admin", read({})).referrerBlocklist)
      .toEqual([]);
  });
});

describe("PUBLIC_URL, SMTP_URL and MAIL_FROM", () => {
  it("default to the gateway's address, no mail, and reports@ the public host name", () => {
    const config = start({ PORT: "8090" });
    expect(publicUrlOf(config)).toBe("http://127.0.0.1:8090");
    expect(config.mail).toEqual({ smtpUrl: undefined, from: "reports@127.0.0.1" });
    expect(publicUrlOf(loadConfig({}, "service"))).toBe("http://0.0.0.0:8080");
  });

  it("take the public URL without its trailing slash, and the sender from its host name", () => {
    const config = start({ PUBLIC_URL: "https://stats.example.com:8443/" });
    expect(config.publicUrl).toBe("https://stats.example.com:8443");
    expect(config.mail.from).toBe("reports@stats.example.com");
    expect(start({ PUBLIC_URL: "https://a.example", MAIL_FROM: "Reports <r@b.example>" }).mail)
      .toEqual({ smtpUrl: undefined, from: "Reports <r@b.example>" });
  });

  it("take smtp and smtps URLs, also from SMTP_URL_FILE", () => {
    expect(start({ SMTP_URL: "smtp://u:p@mail.example:587" }).mail.smtpUrl)
      .toBe("smtp://u:p@mail.example:587");
    expect(start({ SMTP_URL: "smtps://mail.example:465" }).mail.smtpUrl)
      .toBe("smtps://mail.example:465");
    const fromFile = loadConfig({ SMTP_URL_FILE: "/s" }, "start", () => "smtp://m.example:25\n");
    expect(fromFile.mail.smtpUrl).toBe("smtp://m.example:25");
  });

  it("refuse other schemes, a URL without a host, a bad sender; never quoting a password", () => {
    for (const bad of ["http://mail.example", "smtp://", "mail.example:25", "smtp://u:secret@"]) {
      expect(() => start({ SMTP_URL: bad })).toThrow(/^SMTP_URL /);
      expect(() => start({ SMTP_URL: bad })).not.toThrow(/secret/);
    }
    for (const bad of ["reports", "a b@example.com", "<>", "x@y\nBcc: z@w"]) {
      expect(() => start({ MAIL_FROM: bad })).toThrow(/^MAIL_FROM must be an email address/);
    }
    expect(() => start({ PUBLIC_URL: "ftp://x.example" })).toThrow(/^PUBLIC_URL must use/);
  });
});
