/**
 * A URL as it may be shown: the password (or a token written as the user) and every query value
 * masked, since servers take keys there (`?api_key=…`). Text that is not a URL is returned as it is.
 */
export function maskUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (url.password) url.password = "***";
  else if (url.username) url.username = "***";
  for (const key of [...new Set(url.searchParams.keys())]) url.searchParams.set(key, "***");
  // URLSearchParams writes `*` as `%2A`; the mask reads better as it was meant.
  return url.href.replace(/%2A%2A%2A/g, "***");
}
