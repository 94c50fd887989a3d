import { notification } from "./notifications.js";

/** Card data in the shapes a first review of the redaction let through. */
export const CARD_TEXTS = [
  ["next to an expiry", "card 4111 1111 1111 1111 09/29 on file", "4111 1111 1111 1111"],
  ["after a short number", "ref 55 5555555555554444", "5555555555554444"],
  ["dot separated", "card 4111.1111.1111.1111", "4111.1111.1111.1111"],
  ["underscore separated", "card 4111_1111_1111_1111", "4111_1111_1111_1111"],
  ["double-space separated", "card 4111  1111  1111  1111", "4111  1111  1111  1111"],
  ["13 digits", "old visa 4222222222222", "4222222222222"],
  ["14 digits", "diners 36227206271667", "36227206271667"],
  ["glued to a reference", "ref 125555 5555 5555 4444", "5555 5555 4444"],
  ["dashes after short numbers", "ref 7-55-5555-5555-5555-4444 ok", "5555-5555-5555-4444"],
  ["space-dash-space separated", "card 4111 - 1111 - 1111 - 1111 ok", "4111 - 1111 - 1111 - 1111"],
  ["glued to letters", "ref ORD378282246310005X", "378282246310005"],
] as const;

export const PAN_AS_ID = "4000056655665556";

export const PAN_AS_NUMBER = 4111111111111111;
export const EMAIL = "payer.private@example.org";
export const IPV4 = "203.0.113.77";
export const IPV6 = "2001:db8:85a3::8a2e:370:7334";

/** A notification carrying card secrets and card numbers in every shape `CARD_TEXTS` lists, and personal data. */
export function leakyNotification() {
  const body = notification();
  const card = body.resource.renewal_event.payment_detail.card_info;
  Object.assign(card, {
    CVV: "cvv-731",
    cvv2: "cvv-732",
    security_code: "sc-733",
    Card_Pwd: "pwd-7340",
    card_contract_id: "ctr-secret-9911",
  });
  body.resource.renewal_event.payment_detail.metadata = {
    ...Object.fromEntries(CARD_TEXTS.map(([name, text]) => [name.replace(/\W/g, "_"), text])),
    stored_number: PAN_AS_NUMBER,
    payer_id: PAN_AS_ID,
    contact: EMAIL,
    seen_from: IPV4,
    note: `mail ${EMAIL} from ${IPV6} please`,
  };
  return body;
}

/** What must never be found wherever a `leakyNotification` went. */
export const SECRETS = [
  "cvv-731",
  "cvv-732",
  "sc-733",
  "pwd-7340",
  "ctr-secret-9911",
  String(PAN_AS_NUMBER),
  PAN_AS_ID,
  EMAIL,
  IPV4,
  IPV6,
  ...CARD_TEXTS.map(([, , pan]) => pan),
];
