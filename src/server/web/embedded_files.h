// server/web/embedded_files.h - the files compiled into the server (the web calculator and the OpenAPI document),
// by name, and the URL path and content type each is served with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmco2::server {

struct EmbeddedFile {
  std::string name;        // file name without its folder: index.html, app.js, openapi.json
  std::string_view bytes;  // the file's content, as it was at build time
};

// Every embedded file (generated at build time by web/embed.cmake).
const std::vector<EmbeddedFile>& embedded_files();

// A file served at a URL path: "/" is index.html, "/openapi.json" the OpenAPI document, "/static/NAME" the others.
struct WebAsset {
  std::string url_path;
  std::string content_type;
  std::string_view bytes;
};

// The embedded files with their URL paths and content types.
std::vector<WebAsset> web_assets();

}  // namespace llmco2::server
