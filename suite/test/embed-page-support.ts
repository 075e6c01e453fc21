import type { Page } from "playwright-core";

/**
 * What the browser tests read of the embed page's own object (`avatarEmbed`). This project's TypeScript
 * has no DOM types, and the page's CSP forbids evaluating strings: probes are functions, serialized, and
 * can use no outer name.
 */
export interface EmbedGlobals {
  avatarEmbed: {
    state: string;
    video: { videoWidth: number; srcObject: { getAudioTracks(): unknown[] } | null };
  };
}

/** Waits until the page's embed is in `state`. */
export const embedInState = (page: Page, state: string, timeout = 20_000) =>
  page.waitForFunction(
    (wanted) => (globalThis as unknown as EmbedGlobals).avatarEmbed.state === wanted,
    state,
    {
      timeout,
    },
  );

/**
 * Clicks "Start conversation" and waits until the conversation is live with the avatar's picture shown
 * and, when `withVoice`, its voice's track received.
 */
export async function startConversation(page: Page, withVoice = true, timeout = 20_000): Promise<void> {
  await page.getByRole("button", { name: "Start conversation", exact: true }).click();
  await page.waitForFunction(
    (voice) => {
      const e = (globalThis as unknown as EmbedGlobals).avatarEmbed;
      const heard = !voice || (e.video.srcObject?.getAudioTracks().length ?? 0) > 0;
      return e.state === "live" && e.video.videoWidth > 0 && heard;
    },
    withVoice,
    { timeout },
  );
}
