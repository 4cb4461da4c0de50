<?php
// A postback receiver that verifies hash_key and, when QUESTWALL_SIGNING_SECRET is set, the
// Questwall-Signature header (PHP 8+, whose sort is stable). Serve it with any web server, e.g.
// `QUESTWALL_API_KEY=qw_ak_… QUESTWALL_SIGNING_SECRET=qw_ps_… php -S 127.0.0.1:8080 receiver.php`.
// Behind a proxy that changes the scheme or host, set PUBLIC_URL to the address Questwall
// posts to (e.g. https://you.example); otherwise the URL is this request's scheme and Host.
$apiKey = getenv('QUESTWALL_API_KEY');
$hashParam = getenv('HASH_PARAM') ?: 'hash_key';
$signingSecret = getenv('QUESTWALL_SIGNING_SECRET') ?: '';
$publicUrl = getenv('PUBLIC_URL') ?: '';
$tolerance = 300; // seconds between the signature's t and our clock

// Decoded name/value pairs, in order, from the raw query (parse_str would mangle names;
// urldecode, like the other receivers, reads + as a space).
$pairs = [];
foreach (explode('&', $_SERVER['QUERY_STRING'] ?? '') as $part) {
    if ($part === '') continue;
    [$name, $value] = array_pad(explode('=', $part, 2), 2, '');
    $pairs[] = [urldecode($name), urldecode($value)];
}
$received = '';
$signed = [];
foreach ($pairs as [$name, $value]) {
    if ($name === $hashParam) { $received = strtolower($value); } else { $signed[] = [$name, $value]; }
}
usort($signed, fn($a, $b) => strcmp($a[0], $b[0]));
$message = implode('&', array_map(fn($p) => $p[0] . '=' . $p[1], $signed)) . '&' . $apiKey;
$valid = hash_equals(sha1($message), $received);

// t=<unix seconds>,v1=<hex HMAC-SHA256 of "$t.$url">[,v1=…]: one v1 must match.
function signed_by_questwall(string $header, string $url, string $secret, int $tolerance): bool {
    $t = '';
    $given = [];
    foreach (explode(',', $header) as $part) {
        [$name, $value] = array_pad(explode('=', trim($part), 2), 2, '');
        if ($name === 't') { $t = $value; } elseif ($name === 'v1') { $given[] = $value; }
    }
    if (!ctype_digit($t) || abs(microtime(true) - (int) $t) > $tolerance) return false;
    $expected = hash_hmac('sha256', $t . '.' . $url, $secret);
    foreach ($given as $value) {
        if (hash_equals($expected, $value)) return true;
    }
    return false;
}

// The URL as Questwall requested it: scheme and host, then the target as received.
$scheme = !empty($_SERVER['HTTPS']) && $_SERVER['HTTPS'] !== 'off' ? 'https' : 'http';
$url = ($publicUrl ?: $scheme . '://' . ($_SERVER['HTTP_HOST'] ?? '')) . $_SERVER['REQUEST_URI'];
$header = $_SERVER['HTTP_QUESTWALL_SIGNATURE'] ?? '';
if (!$valid || ($signingSecret !== '' && !signed_by_questwall($header, $url, $signingSecret, $tolerance))) {
    http_response_code(403);
    exit;
}
// Once per transaction_id and status (store them: postbacks may arrive more than once):
// "approved" credits the user, "reversed" (the same transaction_id, later) takes it back.
http_response_code(200);
echo 'OK';
