import { type Secret, SecretSchema, SecretType } from "@avatar/contracts/agents";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { SecretRow, SecretTypeValue } from "../schema.js";

export const secretTypeToProto: Record<SecretTypeValue, SecretType> = {
  VENDORA_API_KEY: SecretType.VENDORA_API_KEY,
  VENDORB_API_KEY: SecretType.VENDORB_API_KEY,
  VENDORC_API_KEY: SecretType.VENDORC_API_KEY,
  VENDORD_API_KEY: SecretType.VENDORD_API_KEY,
  VENDORE_API_KEY: SecretType.VENDORE_API_KEY,
};

export function secretTypeFromProto(type: SecretType): SecretTypeValue | undefined {
  return (Object.entries(secretTypeToProto) as [SecretTypeValue, SecretType][]).find(
    ([, v]) => v === type,
  )?.[0];
}

/** The record of a secret; the value (sealed or not) is never part of it. */
export function secretToProto(row: SecretRow): Secret {
  return create(SecretSchema, {
    id: row.id,
    spaceId: row.space_id,
    secretName: row.secret_name,
    secretType: secretTypeToProto[row.secret_type],
    createdAt: toTimestamp(row.created_at),
    allowedHosts: row.allowed_hosts,
  });
}
