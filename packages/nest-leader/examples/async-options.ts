import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { LeaderModule } from 'nest-leader';

@Module({
  imports: [
    LeaderModule.forRootAsync({
      imports: [ConfigModule.forRoot()],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        leaseName: config.getOrThrow<string>('LEASE_NAME'),
        lock: config.get<'auto' | 'kubernetes' | 'file'>('LEADER_LOCK', 'auto'),
        // Environment variables are strings: convert numbers before passing them on.
        leaseDurationSeconds: Number(config.get<string>('LEASE_DURATION_SECONDS', '15')),
      }),
    }),
  ],
})
export class AppModule {}
