"""HAL drivers: `local` (CPU, IREE executable-library ABI); GPU drivers live beside it."""
