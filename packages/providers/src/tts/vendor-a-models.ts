/**
 * vendorA's models, in one place. The public (neutral) model names are what the interface accepts;
 * the value sent on the wire is the same name unless the operator maps it to the vendor's real model
 * id by configuration (`modelIds` in the synthesizer's options).
 */

export const VENDOR_A_MODELS = [
  "vendorA_flash_v2_5",
  "vendorA_multilingual_v2",
  "vendorA_v3",
  "vendorA_v3_conversational",
  "vendorA_v4_turbo",
] as const;

export type VendorAModel = (typeof VENDOR_A_MODELS)[number];

export const DEFAULT_VENDOR_A_MODEL: VendorAModel = "vendorA_flash_v2_5";

interface ModelTraits {
  /** Honours only `stability`; the other voice settings are not sent. */
  stabilityOnly: boolean;
  /** Accepts the `language_code` query parameter (the vendor refuses it for models that cannot enforce a language). */
  languageCode: boolean;
}

export const VENDOR_A_MODEL_TRAITS: Record<VendorAModel, ModelTraits> = {
  vendorA_flash_v2_5: { stabilityOnly: false, languageCode: true },
  vendorA_multilingual_v2: { stabilityOnly: false, languageCode: false },
  vendorA_v3: { stabilityOnly: true, languageCode: true },
  vendorA_v3_conversational: { stabilityOnly: true, languageCode: true },
  vendorA_v4_turbo: { stabilityOnly: true, languageCode: true },
};

/** Wire model ids: identity placeholders, overridable per model by configuration. */
const DEFAULT_WIRE_IDS: Record<VendorAModel, string> = Object.fromEntries(
  VENDOR_A_MODELS.map((m) => [m, m]),
) as Record<VendorAModel, string>;

export function isVendorAModel(model: string): model is VendorAModel {
  return (VENDOR_A_MODELS as readonly string[]).includes(model);
}

export function vendorAWireModel(
  model: VendorAModel,
  overrides?: Partial<Record<VendorAModel, string>>,
): string {
  return overrides?.[model] ?? DEFAULT_WIRE_IDS[model];
}
