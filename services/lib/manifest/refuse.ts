/** The manifest as a service receives it: parsed, validated, or refused with a typed error. */
import { Code, manifestProblem, publicError } from "../errors.ts";
import { ManifestError, parseManifest, type ValidateOptions } from "./validate.ts";
import type { Manifest } from "./types.ts";

export function invalidManifest(path: string, problem: string) {
  return publicError(Code.InvalidArgument, "invalid_manifest", manifestProblem(path, problem));
}

export function parseManifestOrRefuse(json: string, options: ValidateOptions = {}): Manifest {
  try {
    return parseManifest(json, options);
  } catch (error) {
    if (error instanceof ManifestError) throw invalidManifest(error.path, error.problem);
    throw error;
  }
}
