"""What every page of the portal draws with: the layout, form fields, tables, confirmations,
badges and how dates and money are written. A part only one context draws lives in that
context's package."""
