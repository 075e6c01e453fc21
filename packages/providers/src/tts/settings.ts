/** Reads one field of an (already validated) voice_settings object, with the interface's default. */

export function numberSetting(settings: Record<string, unknown>, key: string, fallback: number): number {
  const value = settings[key];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

export function booleanSetting(settings: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = settings[key];
  return typeof value === "boolean" ? value : fallback;
}

export function stringSetting(settings: Record<string, unknown>, key: string, fallback: string): string {
  const value = settings[key];
  return typeof value === "string" && value.length > 0 ? value : fallback;
}

/** The primary subtag of a language tag, lower-cased ("pt-BR" -> "pt"). */
export function primaryLanguage(language: string | undefined): string | undefined {
  const primary = language?.trim().split(/[-_]/)[0]?.toLowerCase();
  return primary ? primary : undefined;
}
