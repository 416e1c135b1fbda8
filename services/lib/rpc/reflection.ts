/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) built from the
 * generated file descriptors, so grpcurl and similar tools can list and call
 * a service without its .proto files.
 */
import { type DescFile, type DescMessage, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import * as v1 from "../gen/grpc/reflection/v1/reflection_pb.ts";
import * as v1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.ts";

/** gRPC status code NOT_FOUND, as the reflection protocol reports it. */
const NOT_FOUND = 5;

interface ReflectionIndex {
  services: string[];
  files: Map<string, DescFile>;
  symbols: Map<string, DescFile>;
}

function indexMessages(
  messages: readonly DescMessage[],
  file: DescFile,
  symbols: Map<string, DescFile>,
) {
  for (const message of messages) {
    symbols.set(message.typeName, file);
    for (const e of message.nestedEnums) symbols.set(e.typeName, file);
    indexMessages(message.nestedMessages, file, symbols);
  }
}

export function buildReflectionIndex(
  files: readonly DescFile[],
  services: string[],
): ReflectionIndex {
  const index: ReflectionIndex = { services, files: new Map(), symbols: new Map() };
  const visit = (file: DescFile) => {
    if (index.files.has(file.proto.name)) return;
    index.files.set(file.proto.name, file);
    for (const service of file.services) {
      index.symbols.set(service.typeName, file);
      for (const method of service.methods) {
        index.symbols.set(`${service.typeName}.${method.name}`, file);
      }
    }
    for (const e of file.enums) index.symbols.set(e.typeName, file);
    indexMessages(file.messages, file, index.symbols);
    file.dependencies.forEach(visit);
  };
  files.forEach(visit);
  return index;
}

/** The file and everything it imports, each once, as serialized FileDescriptorProtos. */
function withDependencies(file: DescFile): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  const visit = (f: DescFile) => {
    if (seen.has(f.proto.name)) return;
    seen.add(f.proto.name);
    out.push(toBinary(FileDescriptorProtoSchema, f.proto));
    f.dependencies.forEach(visit);
  };
  visit(file);
  return out;
}

type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;

// The two protocol versions share every message shape; only package names differ.
function answer(index: ReflectionIndex, request: Request) {
  const base = { validHost: request.host };
  const notFound = (what: string) => ({
    ...base,
    messageResponse: {
      case: "errorResponse" as const,
      value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
    },
  });
  const files = (file: DescFile | undefined, what: string) =>
    file
      ? {
        ...base,
        messageResponse: {
          case: "fileDescriptorResponse" as const,
          value: { fileDescriptorProto: withDependencies(file) },
        },
      }
      : notFound(what);
  const query = request.messageRequest;
  switch (query.case) {
    case "listServices":
      return {
        ...base,
        messageResponse: {
          case: "listServicesResponse" as const,
          value: { service: index.services.map((name) => ({ name })) },
        },
      };
    case "fileByFilename":
      return files(index.files.get(query.value), `file ${query.value}`);
    case "fileContainingSymbol":
      return files(index.symbols.get(query.value), `symbol ${query.value}`);
    case "allExtensionNumbersOfType":
      return index.symbols.has(query.value)
        ? {
          ...base,
          messageResponse: {
            case: "allExtensionNumbersResponse" as const,
            value: { baseTypeName: query.value, extensionNumber: [] },
          },
        }
        : notFound(`type ${query.value}`);
    case "fileContainingExtension":
      return notFound("extension");
    default:
      return notFound("request");
  }
}

/** Mounts both reflection versions on a router. */
export function registerReflection(router: ConnectRouter, index: ReflectionIndex): void {
  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield { ...answer(index, request), originalRequest: request };
      }
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield { ...answer(index, request), originalRequest: request };
      }
    },
  });
}

export const reflectionFiles: DescFile[] = [
  v1.file_grpc_reflection_v1_reflection,
  v1alpha.file_grpc_reflection_v1alpha_reflection,
];
