// Counts the request's header lines for nginx.conf's `js_set $too_many_header_lines`: more than
// MAX_HEADER_LINES and the edge answers 431. Stock nginx limits the size of a head but not the
// number of its lines; uWS, behind it, ignores a request with more than 48 without answering.
// (nginx.conf forwards only the few headers the gateway reads, so this limit protects nothing
// behind the edge; it answers clearly what no legitimate client sends.)
var MAX_HEADER_LINES = 64;

function tooMany(r) {
    return r.rawHeadersIn.length > MAX_HEADER_LINES ? '1' : '';
}

export default { tooMany };
