// Swagger UI over this server's own /openapi.json (trace_app.web.account_routes.api_docs).
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
  });
});
