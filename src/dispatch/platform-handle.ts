declare global {
  namespace MerchantWebhooks {
    /**
     * Filled by `merchant-webhooks/client`: importing it adds `platform: PaymentClient`, so
     * `ctx.platform` and the receiver's `platform` option are typed. (The client's layer comes after
     * this one, so the type reaches here by augmentation, as `ctx.transaction`'s does.)
     */
    interface PlatformTypes {}
  }
}

/** What `ctx.platform` holds: the platform API client once `merchant-webhooks/client` is imported. */
export type PlatformHandle = MerchantWebhooks.PlatformTypes extends { platform: infer T } ? T : unknown;

/** The option of everything that runs handlers (receivers and queue workers) that fills `ctx.platform`. */
export interface PlatformOption {
  /**
   * The platform API client (`createPaymentClient` from `merchant-webhooks/client`) handlers get as
   * `ctx.platform`, to check what a notification says with the platform before trusting it.
   */
  platform?: PlatformHandle;
}
