/**
 * A second gateway replica in front of a test system's services, as a
 * cluster runs several: its own caches, counters and bus, and Redis only
 * when asked for.
 */
import type { Config } from "../../services/lib/config.ts";
import { openPlatform } from "../../services/lib/platform.ts";
import { createLogger, type Logger } from "../../services/lib/log.ts";
import { startGateway } from "../../services/gateway/main.ts";
import type { TestSystem } from "./system.ts";
import { registerGateway } from "./openapi.ts";

export interface GatewayReplica {
  url: string;
  close(): Promise<void>;
}

export async function startGatewayReplica(
  sys: TestSystem,
  options: { redisUrl?: string; config?: Partial<Config>; log?: Logger } = {},
): Promise<GatewayReplica> {
  const config: Config = { ...sys.config, ...options.config, redisUrl: options.redisUrl };
  const platform = await openPlatform(config, {
    database: false,
    log: options.log ?? createLogger(config.logLevel),
    // The replica keeps the time of the system it stands beside.
    clock: sys.system.platform.clock,
  });
  const gateway = await startGateway(platform, { host: "127.0.0.1", port: 0 });
  const unregister = registerGateway(gateway.url);
  return {
    url: gateway.url,
    async close() {
      unregister();
      await gateway.close();
      await platform.close();
    },
  };
}
