<?php
// A postback receiver that verifies hash_key (PHP 8+, whose sort is stable). Serve it with any web server,
// e.g. `QUESTWALL_API_KEY=qw_ak_… php -S 127.0.0.1:8080 receiver.php`.
$apiKey = getenv('QUESTWALL_API_KEY');
$hashParam = getenv('HASH_PARAM') ?: 'hash_key';

// Decoded name/value pairs, in order, from the raw query (parse_str would mangle names).
$pairs = [];
foreach (explode('&', $_SERVER['QUERY_STRING'] ?? '') as $part) {
    if ($part === '') continue;
    [$name, $value] = array_pad(explode('=', $part, 2), 2, '');
    $pairs[] = [rawurldecode($name), rawurldecode($value)];
}
$received = '';
$signed = [];
foreach ($pairs as [$name, $value]) {
    if ($name === $hashParam) { $received = strtolower($value); } else { $signed[] = [$name, $value]; }
}
usort($signed, fn($a, $b) => strcmp($a[0], $b[0]));
$message = implode('&', array_map(fn($p) => $p[0] . '=' . $p[1], $signed)) . '&' . $apiKey;
if (!hash_equals(sha1($message), $received)) {
    http_response_code(403);
    exit;
}
// Credit the user once per transaction_id (store it: postbacks may arrive more than once).
http_response_code(200);
echo 'OK';
