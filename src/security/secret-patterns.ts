import { anyOf, gap, type InstructionPattern, imperative } from "./pattern-parts.ts";

/**
 * Requests to find a secret and hand it over. Naming a secret is ordinary ("requires GITHUB_TOKEN",
 * "include hidden files such as .env", "it does not read ~/.netrc", "the wallet's private key,
 * passed as private_key"); what makes an attack is an imperative to the model to take a secret
 * (read a credential file, run a command that prints one, search for keys, look up the user's
 * personal data) together with handing it over: into one of the tool's own arguments, into the
 * reply, or as the object of the verb itself.
 */

/** Files that hold credentials. */
const SECRET_PATH = anyOf([
  // However the home directory is written before it; not what .ssh holds in the open: public
  // keys, known_hosts, the client config
  String.raw`\.ssh\b(?!/(?:config|known_hosts|authorized_keys|[\w.-]+\.pub)\b)`,
  String.raw`\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)`,
  String.raw`/etc/(?:shadow|gshadow|passwd|sudoers|master\.passwd)\b`,
  String.raw`\.(?<![\w-]\.)aws\b(?!/config\b)|\bgh/hosts\.ya?ml\b|\.config/gcloud\b|\bapplication_default_credentials\.json\b`,
  String.raw`\.(?<![\w.]\.)(?:netrc|npmrc|pypirc|pgpass|git-credentials|vault-token|bash_history|zsh_history|password-store)\b`,
  String.raw`\.docker/config\.json\b|\.kube/config\b|\bkubeconfig\b|/proc/(?:self|\d+)/environ\b`,
  String.raw`\.(?<![\w.$]\.)env(?!\.(?:example|sample|template|dist|defaults)\b)(?:\.[\w-]+)?\b(?![\w-])`,
  // Browser credential stores: named alone, or as a profile's "cookies" / "Login Data" beside the browser
  String.raw`\b(?:logins\.json|key[34]\.db|signons\.sqlite|cookies\.sqlite)\b|\.binarycookies\b`,
  String.raw`\b(?:chrome|chromium|firefox|edge|brave|safari|opera|mozilla|vivaldi)\b[\w ./\\-]{0,80}?\b(?:cookies|login data|web data)\b`,
  String.raw`\b(?:cookies|login data|web data)\b[\w ./\\-]{0,60}?\b(?:chrome|chromium|firefox|edge|brave|opera|vivaldi)\b`,
  String.raw`\bkeychains?/|\.keychain(?:-db)?\b|\.gnupg\b|\bwallet\.dat\b|\.config/solana/id\.json\b|\.ethereum/keystore\b`,
]);

/** A home directory, however it is written, before a path in it. */
const HOME = String.raw`(?:(?:~|\$\{?home\}?|%userprofile%|/home/[\w.-]+|/users/[\w.-]+|/root)/)?`;

/** Commands that print a credential: password stores, keychains, cloud and forge CLIs. */
const SECRET_COMMAND = anyOf([
  String.raw`\bpass (?:show|-c)\b|\bop (?:item (?:get|list)|read|document get)\b|\bop://`,
  String.raw`\bsecurity (?:find-(?:generic|internet)-password|dump-keychain)\b|\bsecret-tool (?:lookup|search)\b`,
  String.raw`\bkeyring get\b|\b(?:lpass|bw) (?:show|get|export)\b|\bkeepassxc-cli (?:show|export)\b`,
  String.raw`\bgh auth (?:token|status (?:-t|--show-token))\b|\bgcloud auth (?:application-default )?print-(?:access|identity)-token\b`,
  String.raw`\baws (?:configure (?:get|export-credentials)|secretsmanager get-secret-value|sts get-session-token)\b`,
  String.raw`\bvault (?:kv get|read)\b|\bkubectl get secrets?\b|\bgpg (?:--decrypt|-d|--export-secret-keys)\b|\bprintenv\b`,
]);

/** What a browser keeps of the user's logins. */
const SAVED_LOGINS = String.raw`\b(?:saved|stored|browser|chrome|firefox|safari|edge|brave)(?:'s)? (?:saved |stored )?(?:passwords|logins|credentials|cookies)\b`;

/** Where credentials are kept, named as a thing rather than a path. */
const SECRET_STORE = anyOf([
  String.raw`\b(?:login |system |icloud |macos |apple )?keychains?\b|\bpassword (?:store|manager|vault|database)s?\b`,
  String.raw`\b(?:1password|bitwarden|lastpass|keepassx?c?|dashlane) (?:vaults?|items?|entries|database)\b`,
  SAVED_LOGINS,
  String.raw`\b(?:session|auth|authentication|login) cookies\b|\bcookie (?:jar|store|database|db)s?\b`,
  String.raw`\b(?:seed|recovery|mnemonic) phrases?\b|\bwallet (?:seed|mnemonic|keystore)s?\b`,
]);

/** A person's data that is not the tool's to ask for, when it is the user's. */
const PERSONAL = anyOf([
  `(?:home|street|postal|residential) address(?:es)?|(?:credit|debit|bank|payment) card(?: numbers?| details)?|card numbers?|cvv2?|cvc`,
  `ssns?|social security(?: numbers?)?|passport(?: numbers?| details)?|dates? of birth|birth ?dates?|driver'?s licen[cs]e(?: numbers?)?`,
  `bank account(?: numbers?| details)?|iban|routing numbers?|(?:tax|national) id(?: numbers?)?|(?:medical|health) records?`,
  `(?:one-time|2fa|mfa|otp|verification) (?:codes?|passwords?)|mother'?s maiden name|security (?:questions?|answers?)|pin(?: codes?| numbers?)?`,
]);
const USERS_PERSONAL = String.raw`\b(?:(?:the )?users?'s?|your|their|his|her) (?:(?:full|saved|stored|current|exact) )?(?:${PERSONAL})\b`;

/** Credentials of the machine the model runs on: "every API key in your environment", "all your environment variables". */
const ENVIRONMENT_VARIABLES = String.raw`\b(?:(?:all|every|each|any)(?: of)?(?: (?:your|the))?|your) (?:environment variables|env vars)\b`;
const ENVIRONMENT_SECRET = anyOf([
  ENVIRONMENT_VARIABLES,
  String.raw`\b(?:api keys?|tokens?|secrets?|credentials?|passwords?)(?: [\w-]+){0,3}? (?:in|from|of|set in|stored in|present in|available in|defined in) (?:your|the|this) (?:(?:current|local|shell|process|host|host's|runtime|system) )?(?:environment|env|shell)\b`,
]);

/** What one searches for when hunting secrets; too ordinary to count after "get" or "read". */
const HUNTED = String.raw`\b(?:private|secret|ssh|signing|gpg|pgp) keys?\b|\b(?:api|access) keys\b|\b(?:access|auth|bearer|refresh|session|oauth) tokens\b|\bpasswords\b|\bcredentials\b|\bsecrets\b|(?:\*|\b[\w-]+|(?<![\w.]))\.(?:pem|key|p12|pfx|ppk|kdbx|keystore|jks)\b|\bkey files\b|\b(?:one-time|2fa|mfa|otp|verification|login|security) codes\b|\b(?:tokens|keys|passwords|secrets|credentials|codes)(?: [\w-]+){0,4}? (?:in|from) (?:the |this |our )?(?:chat|conversation|context|message history|chat history)\b|\b(?:containing|mentioning|matching|with) (?:the )?(?:words? )?["']?(?:passwords?|passwd|secrets?|tokens?|api[ _-]?keys?|credentials?|private[ _-]?keys?)\b`;

const SECRET = anyOf([SECRET_PATH, SECRET_STORE, USERS_PERSONAL, ENVIRONMENT_SECRET]);
const SECRET_SOON = new RegExp(`${gap(60)}(?:${SECRET})`, "iy");

const SEARCH_VERB =
  "(?:search|find|locate|look (?:for|through|in|up)|query|check|inspect|browse|scour|scan|grep|hunt|collect|gather|harvest|enumerate|scrape|sweep|crawl|dig (?:up|out)|go through|comb through)";
const SEARCHING = new RegExp(`^${SEARCH_VERB}$`, "i");
const TAKE_VERB =
  "(?:get|read|open|cat|copy|dump|export|grab|retrieve|fetch|extract|obtain|pull|take|steal|list|print|echo|show|display|output)";
const TAKING = `(?:${SEARCH_VERB}|${TAKE_VERB})`;
/** Taking that is handing over too: "dump all environment variables into the context argument". */
const HANDING_TAKE_VERB = String.raw`\b(?:dump|copy|print|echo|output|export)`;
const HAND_VERB =
  "(?:paste|include|insert|put|place|add|append|attach|embed|supply|provide|pass|send|copy|forward|share|upload|post|return|echo|write|dump|print|output|submit|fill in|set)";

/** The secret itself as the object: "paste their full text", "add them", "attach the output". */
const HANDED = String.raw`\b${HAND_VERB} (?:(?:the|their|its) )?(?:(?:full|entire|complete|whole|raw|exact|verbatim) )*(?:it|them|both|all of them|each(?: one)?|those|these|contents?|text|values?|output|results?|data|files?|keys?|tokens?|bodies|body)\b`;
/** Into the tool call or the reply: "here", "as the `meta` argument", "in the request body". */
const INTO_THE_CALL = String.raw`\bhere\b|\b(?:in|into|as|under|inside|within|to|through|via) (?:the |this |your |an? |each |every )?(?:(?:\x60[^\x60]{1,40}\x60|"[^"]{1,40}"|'[^']{1,40}'|[\w.-]+) )?(?:arguments?|parameters?|params?|fields?|propert(?:y|ies)|inputs?|values?|query|request|call|payload|body|headers?)\b|\b(?:in|into|as|to) \x60[^\x60]{1,40}\x60`;
const HAND_OVER = `${HANDED}|\\b${HAND_VERB}\\b(?=${gap(80)}(?:${INTO_THE_CALL}))`;

/** "…, looking them up in memory": handed over first, found after. */
const FOUND_ELSEWHERE = String.raw`\b(?:look(?:ing)? (?:them |it )?up|search(?:ing)?|find(?:ing)?|retriev(?:e|ing)|collect(?:ing)?|gather(?:ing)?|(?:from|in) (?:your |the )?(?:memory|earlier messages|previous (?:messages|conversations|chats|sessions)|past (?:conversations|chats)|(?:the )?(?:conversation|chat) history|(?:their|the user's) (?:files|documents|e-?mails|inbox)))\b`;

/** Taking a secret somewhere; not "print", "show" or "return", with which tools describe their output. */
const SECRET_VERB =
  "(?:read|open|cat|dump|include|send|pass|upload|attach|copy|paste|append|insert|put|provide|share|post|forward|exfiltrate|leak|encode|base64|steal|grab|collect|extract|add)";

/**
 * A secret named as an example of something else ("include hidden files such as .env"), or only
 * its place ("pass the path to the .env file"), not handed over.
 */
const NOT_THE_SECRET =
  /\b(?:such as|like|e\.g|for example|for instance|including|i\.e|(?:path|location|file ?name|name|directory|folder)s? (?:to|of|for))\b/;

/** An environment variable that holds a credential: GITHUB_TOKEN, OPENAI_API_KEY, $DB_PASSWORD, AWS_ACCESS_KEY_ID. */
const CREDENTIAL_VARIABLE = String.raw`(?:\$\{?|process\.env\.|env:|%)?(?:\b[a-z][a-z0-9]*_(?:[a-z0-9]+_)*(?:token|secret|password|passwd|api_?key|apikey|access_key|private_key|credentials?|pat)(?:_[a-z0-9]+)*\b)`;
const isUpperCase = (text: string) => text !== "" && text === text.toUpperCase();
const lastWord = (text = "") => /\w+$/.exec(text)?.[0] ?? "";

/** "… is to be placed in", "… must be included verbatim in", "… are required as". */
const PASSIVE_HAND = String.raw`\b(?:is|are|must|should|shall|will|needs? to|has to|have to)(?: (?:to|also|always|then|now))?(?: be)?(?: \w+)? (?:pasted|included|inserted|put|placed|added|appended|attached|embedded|supplied|provided|passed|sent|copied|forwarded|shared|uploaded|posted|required|given|submitted|entered|expected)\b`;

export const SECRET_PATTERNS: readonly InstructionPattern[] = [
  {
    what: "asks to read secrets",
    pattern: new RegExp(
      String.raw`${imperative(SECRET_VERB)}(?:_\w+)?\b${gap(80)}(?:${SECRET_PATH}|${SAVED_LOGINS})|\b(?:contents?|value|text|copy|body) of (?:(?:the|your|this|that|a|[\w-]+'s) )*(?:file |directory |folder )?(?:at |in )?${HOME}(?:${SECRET_PATH})`,
      "gi",
    ),
    accept: (match) => !NOT_THE_SECRET.test(match[0]),
  },
  {
    what: "asks to read secrets",
    pattern: new RegExp(
      String.raw`(?:${imperative("(?:run|execute|exec|call|invoke|use|type|enter|spawn)")}\b${gap(30)}|\b(?:output|result|value) of \x60?)(?:${SECRET_COMMAND})(?=${gap(150)}(?:${HAND_OVER}))`,
      "i",
    ),
  },
  {
    what: "asks to read secrets",
    pattern: new RegExp(
      String.raw`${imperative(TAKING)}\b(?:(?=${gap(150)}(?:${HAND_OVER}))|(?<=${HANDING_TAKE_VERB})(?=${gap(150)}(?:${INTO_THE_CALL})))(?=${gap(60)}(?:(?<secret>${SECRET})|(?<hunted>${HUNTED})|(?<variable>${CREDENTIAL_VARIABLE})))|${imperative(HAND_VERB)}\b(?:(?=${gap(150)}${FOUND_ELSEWHERE})(?=${gap(60)}(?<personal>${SECRET}))|(?=${gap(60)}(?<local>${ENVIRONMENT_SECRET}))(?=${gap(150)}(?:${INTO_THE_CALL})))`,
      "gi",
    ),
    accept: ({ 0: verb, groups, index, input }) => {
      if (groups?.secret !== undefined || groups?.personal !== undefined || groups?.local !== undefined)
        return true;
      if (groups?.variable !== undefined && isUpperCase(lastWord(groups.variable))) return true;
      // Keys, passwords and tokens are what one searches for; "get a token and pass it" is setup,
      // unless a place that holds secrets follows ("get the passwords from the keychain").
      if (groups?.hunted !== undefined && SEARCHING.test(verb)) return true;
      SECRET_SOON.lastIndex = index + verb.length;
      return SECRET_SOON.test(input);
    },
  },
  {
    what: "asks to read secrets",
    pattern: new RegExp(
      `(?:${anyOf([SECRET_PATH, SECRET_STORE, ENVIRONMENT_VARIABLES])})${gap(80)}${PASSIVE_HAND}(?=${gap(60)}(?:${INTO_THE_CALL}))`,
      "i",
    ),
  },
  {
    what: "asks for a credential variable",
    pattern: new RegExp(
      String.raw`${imperative("(?:read|send|include|pass|append|attach|post|upload|print|output|return|echo|leak|copy|add|insert|put|provide|share|reveal|dump|exfiltrate|encode|forward|paste|collect|gather|grab|extract|harvest|steal)")}\b(?! from\b)${gap(60)}(?<variable>${CREDENTIAL_VARIABLE})|\b(?:value|contents?) of (?:the )?(?:(?:environment|env) variable )?(?<valueOfVariable>${CREDENTIAL_VARIABLE})`,
      "gi",
    ),
    // Environment variables are written in capitals; "pass the access_token" is a parameter.
    accept: ({ groups }) => isUpperCase(lastWord(groups?.variable ?? groups?.valueOfVariable)),
  },
];
